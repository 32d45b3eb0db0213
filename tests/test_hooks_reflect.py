"""Automatic reflection in the Stop and SessionEnd hooks (issue 17 item 4): the session's
transcript mined into inbox lines, once per session, incrementally, within a size cap,
fail-safe; HIGH preferences captured as notes only when the operator turned it on."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from echo_core.ops.session_reflection import read_mark, reflect_session_transcript
from plugins.hooks_claude.build_part import hooks_document
from tests.capture_kit import VaultBox
from tests.hook_kit import hook_env, payload, run_hook, work_tools, write_transcript
from tests.transcript_kit import prompt_session

INBOX = "inbox/captures/inbox.md"
PREFER = "Always use pytest, not unittest, for new tests."
IDEA = "Idea: we could cache the parsed index between runs later."
RUFF = "Use ruff not flake8 for linting."
SECRET = "sk-ant-api03-" + "Zx9" * 10


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path / "box").init()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def _transcript(tmp_path: Path, session: str, prompts: list[str]) -> Path:
    path = tmp_path / f"{session}.jsonl"
    path.write_bytes(prompt_session(session, prompts))
    return path


def _mined_lines(box: VaultBox) -> list[str]:
    text = box.read(INBOX) if (box.vault / INBOX).exists() else ""
    return [line for line in text.splitlines() if "from Claude Code session" in line]


def _end(box: VaultBox, project: Path, session: str, transcript: Path, **env: str) -> None:
    proc = run_hook("SessionEnd", payload("SessionEnd", session, transcript, project,
                                          reason="prompt_input_exit"),
                    hook_env(box, **env), project)
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr


def _reflect(event: dict[str, Any], ctx: Any, *, deadline: float) -> Any:
    return reflect_session_transcript(ctx, event["session_id"], event["transcript_path"],
                                      deadline=deadline)


def _later() -> float:
    return time.monotonic() + 30


def test_hooks_json_declares_session_end_with_its_timeout() -> None:
    hooks = hooks_document()["hooks"]
    assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] == 5
    assert "hook SessionEnd" in hooks["SessionEnd"][0]["hooks"][0]["command"]


def test_session_end_mines_the_session_into_inbox_lines(box: VaultBox, project: Path,
                                                        tmp_path: Path) -> None:
    transcript = _transcript(tmp_path, "5f0c1a2b-77", ["fix the test", PREFER, IDEA])
    _end(box, project, "5f0c1a2b-77", transcript)
    lines = _mined_lines(box)
    assert len(lines) == 2
    assert lines[0].startswith("- 2026-03-01: Always use pytest, not unittest, for new tests"
                               " — preference, from Claude Code session 5f0c1a2b: ")
    assert "idea, from Claude Code session 5f0c1a2b" in lines[1]
    assert not list((box.vault / "_agent/memory/semantic").glob("*pytest*"))


def test_the_same_session_mined_twice_adds_nothing(box: VaultBox, project: Path,
                                                   tmp_path: Path) -> None:
    transcript = _transcript(tmp_path, "s-twice", [PREFER, IDEA])
    _end(box, project, "s-twice", transcript)
    before = box.tree_digest()
    _end(box, project, "s-twice", transcript)
    assert box.tree_digest() == before


def test_a_session_that_grew_gives_only_what_is_new(box: VaultBox, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path, "s-grow", [PREFER])
    event = payload("Stop", "s-grow", transcript, tmp_path, stop_hook_active=False)
    first = _reflect(event, box.ctx(), deadline=_later())
    assert first is not None and len(first.written) == 1
    transcript.write_bytes(prompt_session("s-grow", [PREFER, "now lint it", RUFF]))
    grown = _reflect(event, box.ctx(), deadline=_later())
    assert grown is not None and [w.split(": ", 1)[1] for w in grown.written] == [
        "Use ruff, not flake8 for linting"]
    assert len(_mined_lines(box)) == 2
    assert read_mark(box.ctx(), "s-grow").offset == transcript.stat().st_size


def test_a_preference_another_session_stated_is_not_inboxed_again(box: VaultBox,
                                                                  tmp_path: Path) -> None:
    for session in ("s-a", "s-b"):
        transcript = _transcript(tmp_path, session, [PREFER])
        _reflect(payload("SessionEnd", session, transcript, tmp_path), box.ctx(),
                        deadline=_later())
    assert len(_mined_lines(box)) == 1


def test_a_truncated_last_line_is_left_for_the_next_call(box: VaultBox, tmp_path: Path) -> None:
    whole = prompt_session("s-live", [PREFER, RUFF])
    cut = whole.rindex(b'"Use ruff') + 5
    transcript = tmp_path / "s-live.jsonl"
    transcript.write_bytes(whole[:cut])  # the last line is still being written
    event = payload("Stop", "s-live", transcript, tmp_path)
    _reflect(event, box.ctx(), deadline=_later())
    assert len(_mined_lines(box)) == 1
    transcript.write_bytes(whole)
    _reflect(event, box.ctx(), deadline=_later())
    assert len(_mined_lines(box)) == 2


def test_a_large_transcript_is_read_up_to_the_cap_and_the_rest_later(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    prompts = [f"request number {i}: please look at module {i}" for i in range(200)]
    transcript = _transcript(tmp_path, "s-big", [PREFER, *prompts, RUFF])
    size = transcript.stat().st_size
    env = hook_env(box, ECHO_REFLECT_MAX_BYTES="20000")
    proc = run_hook("SessionEnd", payload("SessionEnd", "s-big", transcript, project,
                                          reason="other"), env, project)
    assert proc.returncode == 0 and proc.stdout == ""
    assert "reflection read the transcript up to byte" in proc.stderr
    assert f"of {size}" in proc.stderr
    assert "the session has ended" in proc.stderr  # no "next" promised after the end
    assert f"reflect --transcript {transcript}" in proc.stderr
    assert [("pytest" in line) for line in _mined_lines(box)] == [True]
    offset = read_mark(box.ctx(), "s-big").offset
    assert 20000 <= offset < size
    for _ in range(size // 20000 + 1):
        run_hook("SessionEnd", payload("SessionEnd", "s-big", transcript, project), env, project)
    assert read_mark(box.ctx(), "s-big").offset == size
    assert len(_mined_lines(box)) == 2  # ruff found at the end, nothing doubled


def test_reading_stops_at_the_deadline(box: VaultBox, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path, "s-late", [PREFER])
    event = payload("Stop", "s-late", transcript, tmp_path)
    late = _reflect(event, box.ctx(), deadline=time.monotonic() - 1)
    assert late is not None and late.capped and late.written == ()
    assert read_mark(box.ctx(), "s-late").offset == 0
    assert len(_reflect(event, box.ctx(), deadline=_later()).written) == 1


def test_high_preferences_become_notes_when_the_operator_turned_it_on(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path, "s-high", [PREFER, IDEA])
    _end(box, project, "s-high", transcript, ECHO_REFLECT_HIGH="capture")
    note = box.vault / "_agent/memory/semantic/always-use-pytest-not-unittest-for-new-tests.md"
    assert note.exists() and "mined" in box.frontmatter(note.relative_to(box.vault).as_posix())["tags"]
    lines = _mined_lines(box)
    assert len(lines) == 1 and "idea" in lines[0]


def test_the_config_file_turns_high_capture_on(box: VaultBox, project: Path,
                                               tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[reflect]\nhigh = "capture"\n', encoding="utf-8")
    transcript = _transcript(tmp_path, "s-conf", [PREFER])
    _end(box, project, "s-conf", transcript, ECHO_CONFIG=str(config))
    assert list((box.vault / "_agent/memory/semantic").glob("always-use-pytest*"))
    assert _mined_lines(box) == []


def test_automatic_reflection_can_be_turned_off(box: VaultBox, project: Path,
                                                tmp_path: Path) -> None:
    transcript = _transcript(tmp_path, "s-off", [PREFER])
    before = box.tree_digest()
    _end(box, project, "s-off", transcript, ECHO_AUTO_REFLECT="off")
    assert box.tree_digest() == before


def test_secrets_in_a_mined_preference_are_redacted(box: VaultBox, project: Path,
                                                    tmp_path: Path) -> None:
    transcript = _transcript(tmp_path, "s-key", [
        f"Always export ANTHROPIC_API_KEY={SECRET} before the tests.",
        "Never mention <private>the staging password hunter2</private> anywhere."])
    _end(box, project, "s-key", transcript)
    text = box.read(INBOX)
    assert SECRET not in text and "hunter2" not in text and "[REDACTED" in text


@pytest.mark.parametrize("case", ["garbage", "missing", "no-vault", "bad-mark", "no-session"])
def test_session_end_is_fail_safe(box: VaultBox, project: Path, tmp_path: Path,
                                  case: str) -> None:
    transcript = _transcript(tmp_path, "s-bad", [PREFER])
    if case == "garbage":
        transcript.write_bytes(b"\x00\xff{not json\n" * 50 + b'{"type": "user"}\n[1,2]\n')
    elif case == "missing":
        transcript = tmp_path / "gone.jsonl"
    elif case == "no-vault":
        (box.vault / "_agent/echo-vault.md").unlink()
    elif case == "bad-mark":
        marks = next(box.state.glob("vaults/*")) / "session-reflection"
        marks.mkdir(parents=True)
        (marks / "s-bad.json").write_text("{torn", encoding="utf-8")
    session = "" if case == "no-session" else "s-bad"
    before = box.tree_digest()
    _end(box, project, session, transcript)
    if case == "bad-mark":  # an unreadable mark: the session is mined from the start
        assert len(_mined_lines(box)) == 1
    else:
        assert box.tree_digest() == before


def test_an_error_before_the_writes_writes_nothing_and_exits_0(box: VaultBox, project: Path,
                                                               tmp_path: Path) -> None:
    (box.vault / INBOX).unlink()
    (box.vault / INBOX).mkdir()  # the inbox cannot be read: fails before any capture
    transcript = _transcript(tmp_path, "s-err", [PREFER, IDEA])
    before = box.tree_digest()
    proc = run_hook("SessionEnd", payload("SessionEnd", "s-err", transcript, project),
                    hook_env(box), project)
    assert proc.returncode == 0 and proc.stdout == ""
    assert box.tree_digest() == before
    assert read_mark(box.ctx(), "s-err").offset == 0  # tried again next time


def test_stop_still_asks_to_save_when_mining_fails(box: VaultBox, project: Path,
                                                   tmp_path: Path) -> None:
    transcript = write_transcript(tmp_path / "s-ask.jsonl", "s-ask", project,
                                  prompts=[PREFER], tools=work_tools(project))
    (box.vault / INBOX).unlink()
    (box.vault / INBOX).mkdir()
    proc = run_hook("Stop", payload("Stop", "s-ask", transcript, project,
                                    stop_hook_active=False), hook_env(box), project)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["decision"] == "block"
    assert "reflection skipped" in proc.stderr


def test_stop_mines_what_was_said_so_far(box: VaultBox, project: Path, tmp_path: Path) -> None:
    transcript = write_transcript(tmp_path / "s-stop.jsonl", "s-stop", project,
                                  prompts=[PREFER, "thanks"], tools=work_tools(project))
    proc = run_hook("Stop", payload("Stop", "s-stop", transcript, project,
                                    stop_hook_active=False), hook_env(box), project)
    assert proc.returncode == 0 and json.loads(proc.stdout)["decision"] == "block"
    assert len(_mined_lines(box)) == 1


def test_a_preference_restated_in_another_session_leaves_its_note_alone(
        box: VaultBox, tmp_path: Path) -> None:
    ctx = box.ctx(ECHO_REFLECT_HIGH="capture")
    first = _transcript(tmp_path, "s-one", [PREFER])
    _reflect(payload("Stop", "s-one", first, tmp_path), ctx, deadline=_later())
    note = box.vault / "_agent/memory/semantic/always-use-pytest-not-unittest-for-new-tests.md"
    text = note.read_text("utf-8")
    second = _transcript(tmp_path, "s-two", ["hello", PREFER])
    again = _reflect(payload("Stop", "s-two", second, tmp_path),
                            box.ctx(ECHO_REFLECT_HIGH="capture", ECHO_TODAY="2026-03-02"),
                            deadline=_later())
    assert again is not None and [w.split(":")[0] for w in again.written] == ["unchanged"]
    assert note.read_text("utf-8") == text and _mined_lines(box) == []
