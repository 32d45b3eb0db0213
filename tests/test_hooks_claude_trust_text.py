"""Hook findings of the trust review on the text the hooks are given: one undecodable
character (a lone surrogate, the JSON escape ``\\ud83d`` alone: half an emoji) in a prompt,
``cwd`` or ``custom_instructions`` is replaced by U+FFFD and the rest kept (before, no
checkpoint was written and no Stop or SessionEnd ever mined the session again), and
control characters from the payload never reach the checkpoint note raw (it is put back
into the session after the compaction)."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

from echo_core.ops.session_reflection import read_mark, reflect_session_transcript
from plugins.hooks_claude.runner import read_payload
from tests.capture_kit import VaultBox
from tests.hook_kit import (  # noqa: F401 - fixtures box, project
    checkpoint_names,
    context_of,
    hook_box,
    hook_env,
    hook_project,
    payload,
    run_hook,
)

SESSION = "sur-1"
HALF = "\ud83d"  # a lone high surrogate: what the JSON escape \ud83d alone decodes to
PREFER = "I prefer tabs over spaces, always use tabs"
NOTE_DIR = "_agent/memory/working"
RAW_CONTROLS = ("\x00", "\x07", "\x1b", "\u202e")


def _transcript(path: Path, prompts: list[str]) -> Path:
    """A minimal transcript: one user line per prompt (``json.dumps`` writes a lone
    surrogate as its escape, as Claude Code's JSON would), then one edit."""
    lines = [{"type": "user", "uuid": f"u{i}", "sessionId": SESSION, "isSidechain": False,
              "message": {"role": "user", "content": text}} for i, text in enumerate(prompts)]
    lines.append({"type": "assistant", "uuid": "a1", "sessionId": SESSION, "isSidechain": False,
                  "message": {"role": "assistant", "content": [
                      {"type": "tool_use", "id": "t1", "name": "Edit",
                       "input": {"file_path": "/home/ada/src/app/main.py"}}]}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="ascii")
    return path


def _inbox(box: VaultBox) -> str:
    path = box.vault / "inbox/captures/inbox.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _checkpoint(box: VaultBox) -> str:
    names = checkpoint_names(box)
    assert len(names) == 1, names
    return (box.vault / NOTE_DIR / names[0]).read_text(encoding="utf-8")


def test_a_half_emoji_in_a_prompt_is_replaced_and_the_session_is_mined(
        box: VaultBox, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "t.jsonl",
                             [f"I prefer {HALF} emoji in commit messages, always use them",
                              PREFER])
    done = reflect_session_transcript(box.ctx(), SESSION, str(transcript),
                                      deadline=time.monotonic() + 30)
    assert done is not None and len(done.written) == 2
    inbox = _inbox(box)
    assert "Prefer \ufffd emoji in commit messages" in inbox
    assert "Prefer tabs over spaces, always use tabs" in inbox
    assert read_mark(box.ctx(), SESSION).offset == transcript.stat().st_size


def test_stop_and_session_end_mine_past_a_half_emoji(box: VaultBox, project: Path,
                                                     tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "t.jsonl", [f"look at this {HALF} half emoji", PREFER,
                                                    f"I prefer {HALF} over nothing, always"])
    stop = run_hook("Stop", payload("Stop", f"{SESSION}{HALF}", transcript, project,
                                    stop_hook_active=False, last_assistant_message=HALF),
                    hook_env(box), project)
    assert stop.returncode == 0 and "reflection skipped" not in stop.stderr, stop.stderr
    assert "Prefer tabs over spaces" in _inbox(box)
    assert read_mark(box.ctx(), f"{SESSION}{HALF}").offset == transcript.stat().st_size
    end = run_hook("SessionEnd", payload("SessionEnd", SESSION, transcript, project,
                                         reason="other"), hook_env(box), project)
    assert (end.returncode, end.stdout, end.stderr) == (0, "", "")
    assert read_mark(box.ctx(), SESSION).offset == transcript.stat().st_size


def test_a_checkpoint_keeps_a_session_whose_prompt_cwd_and_instructions_hold_half_an_emoji(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "t.jsonl", [f"look at this {HALF} half emoji", PREFER])
    event = payload("PreCompact", SESSION, transcript, project, trigger="manual",
                    custom_instructions=f"keep {HALF} the plan")
    proc = run_hook("PreCompact", {**event, "cwd": f"{project}{HALF}"}, hook_env(box), project)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    note = _checkpoint(box)
    assert f"in {project}\ufffd:" in note
    assert "Compaction instructions: keep \ufffd the plan" in note
    assert "- look at this \ufffd half emoji" in note and f"- {PREFER}" in note


def test_control_characters_of_the_payload_are_escaped_in_the_checkpoint(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "t.jsonl", [PREFER])
    cwd = "/home/ada/\x1b[31mred\x07\x00\u202eevil\nline"
    event = payload("PreCompact", SESSION, transcript, project, trigger="auto\x1b[2J",
                    custom_instructions="keep \x1b]0;title\x07 it")
    proc = run_hook("PreCompact", {**event, "cwd": cwd}, hook_env(box), project)
    assert (proc.returncode, proc.stderr) == (0, "")
    note = _checkpoint(box)
    assert not [c for c in RAW_CONTROLS if c in note], repr(note)
    assert ("(auto\\x1b[2J) of Claude Code session sur1 in "
            "/home/ada/\\x1b[31mred\\x07\\x00\\u202eevil\\x0aline: 1 prompts") in note
    assert "Compaction instructions: keep \\x1b]0;title\\x07 it\n" in note


def test_a_checkpoint_with_raw_control_characters_is_shown_escaped_after_compaction(
        box: VaultBox, project: Path) -> None:
    """A checkpoint note written before the escaping (or edited by hand) holds raw
    control characters: SessionStart shows them as escapes, lines kept."""
    title = f"2026-03-01 checkpoint {SESSION.replace('-', '')}"
    assert box.capture(title, kind="working", force=True,
                       body="Checkpoint in /tmp/\x1b[31mred\u202e\nRecent prompts:\n- a\x07b").ok
    proc = run_hook("SessionStart", payload("SessionStart", SESSION, None, project,
                                            source="compact"), hook_env(box), project)
    assert proc.returncode == 0, proc.stderr
    text = context_of(proc.stdout, "SessionStart")
    assert "## Checkpoint before this compaction" in text
    assert not [c for c in RAW_CONTROLS if c in text], repr(text)
    assert "Checkpoint in /tmp/\\x1b[31mred\\u202e\nRecent prompts:\n- a\\x07b" in text


def test_the_payload_reader_replaces_lone_surrogates_and_keeps_pairs() -> None:
    raw = json.dumps({"prompt": f"half {HALF} whole \U0001f600", HALF: [HALF, 1]}).encode()
    assert read_payload(io.BytesIO(raw)) == {"prompt": "half \ufffd whole \U0001f600",
                                             "\ufffd": ["\ufffd", 1]}
    plain = {"prompt": "no escape here \\ud83d (a backslash)", "n": 2}
    assert read_payload(io.BytesIO(json.dumps(plain).encode())) == plain
