"""Whether the agent already saved, as the Stop hook reads it from the transcript: a shell
command line is parsed (shlex) into commands, and only a command whose program is
echo-memory and whose own options say "write" is a save. Text that merely mentions
echo-memory (an ``echo``, a commit message) is none; ``--dry-run`` inside a quoted value
is text, not the flag."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tests.capture_kit import VaultBox
from tests.hook_kit import (  # noqa: F401 - fixtures box, project
    hook_box,
    hook_env,
    hook_project,
    payload,
    run_hook,
    work_tools,
    write_transcript,
)

SESSION = "sess-save-detect-1"
ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("command", "saves"), [
    # the tester's two findings
    ('echo-memory capture "Deploy note" --body "use --dry-run first"', True),
    ('echo "tip: run echo-memory capture X"', False),
    # mentions of echo-memory that run something else
    ("echo 'echo-memory capture X'", False),
    ('git commit -m "docs: echo-memory capture X saves a note"', False),
    ('grep -rn "echo-memory capture" docs/ ; ls', False),
    ("# echo-memory capture X", False),
    ("ls  # then echo-memory capture X", False),
    # --dry-run only counts as a real option of the echo-memory command
    ('echo-memory capture X --dry-run', False),
    ('echo-memory capture X --body "--dry-run"', True),  # the body's text
    ("echo-memory capture X -- --dry-run", True),  # after --: a word, not an option
    ('echo-memory capture X && echo "no --dry-run here"', True),
    ('echo-memory capture X --dry-run && echo "saved"', False),
    # separators: &&, ||, ;, |, newlines; line continuations join
    ('cd /p || exit 1; echo-memory capture "X" --kind person', True),
    ("echo '{}' | echo-memory capture X --body -", True),
    ("make build\necho-memory session-end b.json --apply", True),
    ('echo-memory capture "X" \\\n  --kind person \\\n  --dry-run', False),
    # the program after assignments and wrappers, or by path
    ("ECHO_VAULT=~/v echo-memory capture X", True),
    ("env ECHO_VAULT=/v time echo-memory reflect p.json --apply 2>&1 | tail -3", True),
    ("uv run echo-memory capture X", True),
    ("/home/me/.venv/bin/echo-memory capture X", True),
    ('"echo-memory" capture X', True),
    # bad quoting is tolerated: the words before it still count
    ("cat > n.md <<'EOF'\nDon't deploy on Fridays\nEOF\necho-memory capture Rule --body -", True),
    ('echo "unclosed echo-memory capture X', False),
    # verbs and help as before
    ("echo-memory recall capture session-end --apply", False),
    ("echo-memory --vault ~/v capture X", True),
    ("echo-memory capture X --kind -h", True),  # -h is --kind's value here
    ("echo-memory capture X -h", False),
])
def test_a_save_is_an_echo_memory_write_not_a_mention(command: str, saves: bool) -> None:
    from plugins.hooks_claude.transcript import is_save_command

    assert is_save_command(command) is saves


@pytest.mark.parametrize(("name", "tool_input", "saves"), [
    ("mcp__plugin_echo-memory_echo__echo_capture", {"title": "x"}, True),
    ("mcp__plugin_echo-memory_echo__echo_capture", {"title": "x", "dry_run": True}, False),
    ("mcp__plugin_echo-memory_echo__echo_log_session", {"apply": True}, True),
    ("mcp__plugin_echo-memory_echo__echo_reflect", {}, False),
    ("mcp__other__echo_recall", {}, False),
])
def test_mcp_writes_count_but_a_dry_run_capture_does_not(
        name: str, tool_input: dict[str, object], saves: bool) -> None:
    from plugins.hooks_claude.transcript import is_save_tool

    assert is_save_tool(name, tool_input) is saves


def test_the_programs_are_the_projects_console_scripts() -> None:
    from plugins.hooks_claude.transcript import PROGRAMS

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    assert set(scripts) == PROGRAMS


def _stop(box: VaultBox, project: Path, tmp_path: Path, command: str) -> str:
    tools = [*work_tools(project), ("Bash", {"command": command, "description": "save"})]
    transcript = write_transcript(tmp_path / f"{SESSION}.jsonl", SESSION, project,
                                  prompts=["fix the deploy script"], tools=tools)
    proc = run_hook("Stop", payload("Stop", SESSION, transcript, project,
                                    stop_hook_active=False, last_assistant_message="Done."),
                    hook_env(box, ECHO_HOOK_BUDGET_SECONDS="8"), project)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_stop_is_quiet_after_a_capture_whose_body_mentions_dry_run(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    assert _stop(box, project, tmp_path,
                 'echo-memory capture "Deploy note" --body "use --dry-run first"') == ""


def test_stop_asks_when_the_agent_only_echoed_a_capture_command(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    out = _stop(box, project, tmp_path, 'echo "tip: run echo-memory capture X"')
    assert json.loads(out)["decision"] == "block"
