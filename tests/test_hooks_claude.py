"""``echo-memory hook <event>``: the Claude Code hook contract (reference/claude-code.md,
SPEC §4.5), each event run as Claude Code runs it: a fresh process of the installed
console script, the event JSON on stdin, outside the source tree."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from types import ModuleType

import pytest

import plugins.hooks_claude
import plugins.transport_cli
from echo_core.testing import CommandsContract, PluginContract
from echo_core.testing.commands_contract import CommandsContract as _Commands
from plugins.hooks_claude.stop_gate import SUBSTANTIVE_EDITS, SUBSTANTIVE_TOOL_USES
from tests.capture_kit import VaultBox
from tests.hook_kit import (
    ECHO_BIN,
    FALLBACK_CLI,
    MAX_HOOK_OUTPUT,
    context_of,
    hook_env,
    payload,
    run_hook,
    seeded_vault,
    work_tools,
    write_transcript,
)

EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return seeded_vault(tmp_path / "box")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The agent's working directory (cwd of the hook; not the source tree)."""
    path = tmp_path / "project"
    path.mkdir()
    return path


def quiet(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "", proc.stdout


# --- SessionStart -------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["startup", "clear", "compact"])
def test_session_start_injects_the_brief_digest(box: VaultBox, project: Path, source: str) -> None:
    proc = run_hook("SessionStart", payload("SessionStart", "s-start", None, project,
                                            source=source, model="claude-sonnet-4-5"),
                    hook_env(box), project)
    assert proc.returncode == 0, proc.stderr
    text = context_of(proc.stdout, "SessionStart")
    assert "## Scope" in text and "Agent Log" in text


@pytest.mark.parametrize("source", ["resume", "fork"])
def test_session_start_is_quiet_when_a_conversation_continues(
        box: VaultBox, project: Path, source: str) -> None:
    quiet(run_hook("SessionStart", payload("SessionStart", "s", None, project, source=source),
                   hook_env(box), project))


def test_session_start_on_an_uninitialised_vault_says_so_in_one_line(
        tmp_path: Path, project: Path) -> None:
    bare = VaultBox(tmp_path / "bare")
    proc = run_hook("SessionStart", payload("SessionStart", "s", None, project, source="startup"),
                    hook_env(bare), project)
    assert proc.returncode == 0, proc.stderr
    text = context_of(proc.stdout, "SessionStart")
    assert text.startswith("echo-memory: memory unavailable: ") and "\n" not in text


def test_session_start_output_is_capped_at_10000_characters(box: VaultBox, project: Path) -> None:
    prefs = box.vault / "_agent/memory/semantic/operator-preferences.md"
    facts = "\n".join(f"- Preference {i}: \"quoted\" and long enough to matter {'x' * 60}"
                      for i in range(300))
    prefs.write_text(prefs.read_text("utf-8").replace("## Fact / Pattern", f"## Fact / Pattern\n\n{facts}", 1),
                     encoding="utf-8")
    proc = run_hook("SessionStart", payload("SessionStart", "s", None, project, source="startup"),
                    hook_env(box, ECHO_LOAD_BUDGET="60000"), project)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout) <= MAX_HOOK_OUTPUT
    assert context_of(proc.stdout, "SessionStart").endswith("hook output limit)")


# --- UserPromptSubmit ---------------------------------------------------------------------


def test_prompt_gets_the_relevant_note_within_1500_characters(box: VaultBox, project: Path) -> None:
    proc = run_hook("UserPromptSubmit", payload("UserPromptSubmit", "s", None, project,
                                                prompt="How do we deploy the web app?"),
                    hook_env(box), project)
    assert proc.returncode == 0, proc.stderr
    text = context_of(proc.stdout, "UserPromptSubmit")
    assert "resources/references/deploy-checklist.md" in text
    assert "migrations" in text
    assert len(text) <= 1500


@pytest.mark.parametrize("prompt", ["write a haiku about the sea", "fix the flaky parser test",
                                    "hello", "/clear", "   "])
def test_irrelevant_prompt_gets_nothing(box: VaultBox, project: Path, prompt: str) -> None:
    quiet(run_hook("UserPromptSubmit", payload("UserPromptSubmit", "s", None, project,
                                               prompt=prompt), hook_env(box), project))


def test_prompt_context_never_exceeds_1500_characters(box: VaultBox, project: Path) -> None:
    topics = ["billing", "hiring", "travel", "garden", "tax", "music", "cooking", "running",
              "reading", "backup", "laptop", "insurance", "holiday", "dentist", "budget"]
    for topic in topics:  # an ordinary vault around the deploy notes
        assert box.capture(f"{topic} notes", kind="concept", body=f"All about {topic}.").ok
    for i, tier in enumerate(["web", "api", "worker", "cron"]):
        body = (f"Deploy the {tier} tier to the web cluster: " +
                " ".join(f"step {n} checks the {tier} tier deploy." for n in range(30)))
        assert box.capture(f"{tier} deploy runbook", kind="reference", body=body, force=True).ok
    proc = run_hook("UserPromptSubmit", payload("UserPromptSubmit", "s", None, project,
                                                prompt="deploy the web tier"),
                    hook_env(box), project)
    text = context_of(proc.stdout, "UserPromptSubmit")
    assert len(text) <= 1500 and text.count("\n- ") >= 2


# --- Stop ---------------------------------------------------------------------------------


def _stop(box: VaultBox, project: Path, session: str, transcript: Path,
          **fields: object) -> subprocess.CompletedProcess[str]:
    fields.setdefault("stop_hook_active", False)
    fields.setdefault("last_assistant_message", "Done: the deploy script is fixed.")
    return run_hook("Stop", payload("Stop", session, transcript, project, **fields),
                    hook_env(box), project)


def _work_transcript(tmp_path: Path, project: Path, session: str, **kw: int) -> Path:
    return write_transcript(tmp_path / f"{session}.jsonl", session, project,
                            prompts=["fix the deploy script", "also update the docs"],
                            tools=work_tools(project, **kw))


def test_stop_asks_once_for_a_substantive_unsaved_session(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    transcript = _work_transcript(tmp_path, project, "sess-1")
    first = _stop(box, project, "sess-1", transcript)
    assert first.returncode == 0, first.stderr
    assert len(first.stdout) <= MAX_HOOK_OUTPUT
    reply = json.loads(first.stdout)
    assert reply["decision"] == "block" and set(reply) == {"decision", "reason"}
    assert "session-end" in reply["reason"] and "capture" in reply["reason"]
    quiet(_stop(box, project, "sess-1", transcript))
    quiet(_stop(box, project, "sess-1", transcript, stop_hook_active=True))


def test_stop_is_quiet_when_stop_hook_active(box: VaultBox, project: Path, tmp_path: Path) -> None:
    transcript = _work_transcript(tmp_path, project, "sess-2")
    quiet(_stop(box, project, "sess-2", transcript, stop_hook_active=True))
    assert json.loads(_stop(box, project, "sess-2", transcript).stdout)["decision"] == "block"


def test_stop_is_quiet_for_a_short_session(box: VaultBox, project: Path, tmp_path: Path) -> None:
    transcript = _work_transcript(tmp_path, project, "sess-3",
                                  edits=SUBSTANTIVE_EDITS - 1, reads=SUBSTANTIVE_TOOL_USES - 2)
    quiet(_stop(box, project, "sess-3", transcript))


@pytest.mark.parametrize("command", [
    'echo-memory capture "Deploy fix" --kind episodic --body "moved flush last"',
    "cat > /tmp/b.json && echo-memory session-end /tmp/b.json --apply",
])
def test_stop_is_quiet_when_the_session_already_saved(
        box: VaultBox, project: Path, tmp_path: Path, command: str) -> None:
    tools = [*work_tools(project), ("Bash", {"command": command, "description": "save"})]
    transcript = write_transcript(tmp_path / "t.jsonl", "sess-4", project,
                                  prompts=["fix it"], tools=tools)
    quiet(_stop(box, project, "sess-4", transcript))


def test_stop_is_quiet_when_a_session_log_was_written_since_the_session_began(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    import datetime as dt

    started = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(hours=1)
    transcript = write_transcript(tmp_path / "t.jsonl", "sess-5", project, prompts=["go"],
                                  tools=work_tools(project), start=started)
    log = box.vault / f"_agent/sessions/{started.date().isoformat()}-0930-deploy-fix.md"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("# Session deploy fix\n", encoding="utf-8")
    old = time.time() - 86400 * 2
    os.utime(log, (old, old))  # a log from before the session does not count
    assert json.loads(_stop(box, project, "sess-5", transcript).stdout)["decision"] == "block"
    log.touch()
    quiet(_stop(box, project, "sess-6", transcript))


# --- PreCompact ---------------------------------------------------------------------------


def test_pre_compact_writes_a_checkpoint_note_and_prints_nothing(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    transcript = _work_transcript(tmp_path, project, "a1b2c3d4-e5f6")
    fields = {"trigger": "auto", "custom_instructions": ""}
    quiet(run_hook("PreCompact", payload("PreCompact", "a1b2c3d4-e5f6", transcript, project,
                                         **fields), hook_env(box), project))
    path = "_agent/memory/working/2026-03-01-checkpoint-a1b2c3d4.md"
    text = box.read(path)
    assert box.frontmatter(path)["type"] == "working"
    assert "- fix the deploy script" in text and "- also update the docs" in text
    assert "- src/mod0.py" in text and "- src/mod1.py" in text
    assert "/model" not in text and "Caveat" not in text
    quiet(run_hook("PreCompact", payload("PreCompact", "a1b2c3d4-e5f6", transcript, project,
                                         trigger="manual", custom_instructions="keep the plan"),
                   hook_env(box), project))
    again = box.read(path)
    assert again.startswith(text.split("## Notes")[0])  # the first checkpoint is kept
    assert "- 2026-03-01: Checkpoint before context compaction (manual)" in again
    assert "  Compaction instructions: keep the plan" in again
    assert len(list((box.vault / "_agent/memory/working").glob("*checkpoint*"))) == 1


def test_pre_compact_without_prompts_or_edits_writes_nothing(box: VaultBox, project: Path) -> None:
    before = box.files()
    quiet(run_hook("PreCompact", payload("PreCompact", "s", None, project, trigger="auto",
                                         custom_instructions=""), hook_env(box), project))
    assert box.files() == before


# --- fail-safe ----------------------------------------------------------------------------


@pytest.mark.parametrize("event", EVENTS)
@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", b"\xff\xfe\x00garbage", b"null"])
def test_corrupt_stdin_exits_0_silently(box: VaultBox, project: Path, event: str,
                                        stdin: bytes) -> None:
    quiet(run_hook(event, stdin, hook_env(box), project))


@pytest.mark.parametrize("event", EVENTS)
def test_a_vault_path_that_is_a_file_exits_0_silently(tmp_path: Path, project: Path,
                                                      event: str) -> None:
    """Silent, except SessionStart: one line saying memory is unavailable."""
    box = VaultBox(tmp_path / "b")
    box.vault.rmdir()
    box.vault.write_text("not a folder\n")
    transcript = _work_transcript(tmp_path, project, "s-file")
    proc = run_hook(event, payload(event, "s-file", transcript, project, source="startup",
                                   prompt="deploy the web app", stop_hook_active=False,
                                   trigger="auto"), hook_env(box), project)
    if event != "SessionStart":
        quiet(proc)
        return
    assert proc.returncode == 0, proc.stderr
    assert context_of(proc.stdout, "SessionStart").startswith("echo-memory: memory unavailable: ")


@pytest.mark.parametrize("event", ["UserPromptSubmit", "PreCompact"])
def test_a_garbage_entity_index_exits_0_silently(box: VaultBox, project: Path, tmp_path: Path,
                                                 event: str) -> None:
    (box.vault / "_agent/index/entities.json").write_text("garbage{{", encoding="utf-8")
    transcript = _work_transcript(tmp_path, project, "s-bad")
    quiet(run_hook(event, payload(event, "s-bad", transcript, project,
                                  prompt="deploy the web app", trigger="auto"),
                   hook_env(box), project))
    assert not list((box.vault / "_agent/memory/working").glob("*checkpoint*"))


def test_unknown_event_exits_0_silently(box: VaultBox, project: Path) -> None:
    quiet(run_hook("Notification", payload("Notification", "s", None, project, message="hi"),
                   hook_env(box), project))


def test_a_hook_gives_up_silently_at_its_time_budget(box: VaultBox, project: Path) -> None:
    command = [ECHO_BIN] if ECHO_BIN else FALLBACK_CLI
    started = time.monotonic()
    proc = subprocess.Popen([*command, "hook", "UserPromptSubmit"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project,
                            env=hook_env(box, ECHO_HOOK_BUDGET_SECONDS="0.5"))
    try:
        proc.wait(timeout=9)  # stdin stays open, so the hook's read blocks until the budget
        assert proc.stdout is not None
        stdout = proc.stdout.read()
    finally:
        proc.kill()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert proc.returncode == 0 and stdout == b""
    assert time.monotonic() - started < 9


# --- units: transcript reading and output capping ------------------------------------------


def test_transcript_summary_reads_defensively() -> None:
    from plugins.hooks_claude.transcript import summarize

    use = {"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {"file_path": "/p/a.py"}}
    lines = [
        "garbage", "[1]", json.dumps({"type": "assistant", "message": "not a dict"}),
        json.dumps({"type": "user", "timestamp": "2026-03-01T09:00:00Z",
                    "message": {"role": "user", "content": [{"type": "text", "text": "first prompt"}]}}),
        json.dumps({"type": "user", "isSidechain": True, "message": {"content": "subagent task"}}),
        json.dumps({"type": "user", "message": {"content": [{"type": "tool_result", "content": "x"}]}}),
        json.dumps({"type": "assistant", "message": {"content": [use, {"type": "thinking"}]}}),
        json.dumps({"type": "assistant", "message": {"content": [use]}}),  # the same block again
        json.dumps({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "name": "mcp__plugin_echo-memory_echo__echo_capture", "input": {}}]}}),
    ]
    summary = summarize(lines)
    assert summary.started_at == 1772355600.0
    assert summary.prompts == ("first prompt",)
    assert (summary.tool_uses, summary.edits, summary.edited_files) == (2, 1, ("/p/a.py",))
    assert summary.saved


@pytest.mark.parametrize(("command", "saves"), [
    ('echo-memory capture "X" --kind person', True),
    ('echo-memory --vault ~/v capture "X"', True),
    ('echo-memory capture "X" --dry-run', False),
    ("echo-memory session-end b.json", False),
    ("cd x && echo-memory session-end - --apply < b.json", True),
    ("echo-memory recall capture session-end --apply", False),
    ("grep capture notes.md", False),
])
def test_save_commands_are_recognised(command: str, saves: bool) -> None:
    from plugins.hooks_claude.transcript import is_save_command

    assert is_save_command(command) is saves


def test_output_is_cut_to_the_limit_and_stays_valid_json() -> None:
    from plugins.hooks_claude.runner import TRUNCATION_MARK, render_output

    big = {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                  "additionalContext": 'line "quoted"\n' * 5000}}
    text = render_output(big, 9_999)
    assert len(text) <= 9_999
    assert json.loads(text)["hookSpecificOutput"]["additionalContext"].endswith(TRUNCATION_MARK)
    assert render_output({"decision": "block", "reason": "short"}) == \
        '{"decision": "block", "reason": "short"}'


# --- contracts ----------------------------------------------------------------------------


class TestHooksClaudePlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.hooks_claude

    @pytest.fixture
    def plugin_name(self) -> str:
        return "hooks_claude"


class TestHooksClaudeCommands(CommandsContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.hooks_claude

    @pytest.fixture
    def reserved_command_names(self) -> set[str]:
        return set(_Commands.build_cli(plugins.transport_cli).commands)
