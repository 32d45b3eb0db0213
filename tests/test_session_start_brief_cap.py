"""SessionStart's additionalContext keeps the brief's cap (SPEC §4.1: ``ECHO_LOAD_BUDGET``,
8000 characters): the hook's own header and, after a compaction, the checkpoint section
come off the brief's budget, so the brief is trimmed by its own rules (its end, the inbox,
still there) instead of the whole running past the cap. Plugin blocks after the brief use
the room up to Claude Code's 10,000-character hook output (``MAX_OUTPUT_CHARS``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plugins.hooks_claude.checkpoint import write_checkpoint
from plugins.hooks_claude.handlers import SESSION_HEADER, session_start
from tests.capture_kit import VaultBox
from tests.conftest import run_cli
from tests.hook_kit import NOW, payload, work_tools, write_transcript

SEMANTIC = "_agent/memory/semantic"
SESSION = "a1b2c3d4-e5f6"
CHECKPOINT = "_agent/memory/working/2026-03-01-checkpoint-a1b2c3d4.md"


def _full_vault(root: Path) -> VaultBox:
    """A vault whose brief is over 8000 characters before trimming (many short semantic
    notes: trimmed a line at a time, so the brief ends close to its budget)."""
    box = VaultBox(root).init()
    for i in range(200):
        (box.vault / SEMANTIC / f"fact-{i:03d}.md").write_text(
            "---\ntype: semantic\nstatus: active\ncreated: 2026-02-01\nupdated: 2026-02-01\n"
            f"tags: [semantic]\n---\n# Fact {i:03d}\n\nThe build uses ruff, rule {i:03d}.\n",
            "utf-8")
    return box


def _context(out: object) -> str:
    assert isinstance(out, dict)
    return str(out["hookSpecificOutput"]["additionalContext"])


@pytest.mark.parametrize("budget", ["", "3000", "8000"])
def test_the_context_of_a_full_brief_keeps_the_briefs_cap(tmp_path: Path, budget: str) -> None:
    box = _full_vault(tmp_path)
    env = {"ECHO_NOW": NOW, **({"ECHO_LOAD_BUDGET": budget} if budget else {})}
    cap = int(budget or 8000)
    text = _context(session_start({"source": "startup", "session_id": "s"},
                                  lambda: box.ctx(**env)))
    assert len(text) <= cap, len(text)
    assert text.startswith(SESSION_HEADER)
    brief = text[len(SESSION_HEADER):]
    assert brief.startswith("echo-memory vault: schema")
    assert "## Inbox\n" in brief  # trimmed by the brief's rules, not cut at its end
    assert "more semantic notes not shown" in brief
    assert cap - len(text) < 200  # the room went to the brief, not lost


def test_the_hook_process_keeps_the_cap(tmp_path: Path) -> None:
    box = _full_vault(tmp_path)
    env = box.env(ECHO_VAULT=str(box.vault), ECHO_STATE_DIR=str(box.state), ECHO_NOW=NOW)
    out = run_cli(["hook", "SessionStart"], env=env, stdin=b'{"source": "startup"}')
    assert out.returncode == 0, out.stderr
    text = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= 8000, len(text)
    assert "## Inbox\n" in text


def test_after_a_compaction_the_checkpoint_comes_off_the_briefs_budget(
        tmp_path: Path) -> None:
    box = _full_vault(tmp_path / "box")
    (tmp_path / "project").mkdir()
    project = tmp_path / "project"
    transcript = write_transcript(
        tmp_path / "t.jsonl", SESSION, project, tools=work_tools(project),
        prompts=[f"step {i}: keep the retry loop " + "and the plan " * 20 for i in range(12)])
    pre = payload("PreCompact", SESSION, transcript, project, trigger="auto",
                  custom_instructions="")
    assert write_checkpoint(pre, lambda: box.ctx(ECHO_NOW=NOW)) == CHECKPOINT
    start = payload("SessionStart", SESSION, None, project, source="compact")
    text = _context(session_start(start, lambda: box.ctx(ECHO_NOW=NOW)))
    assert len(text) <= 8000, len(text)
    assert text.startswith(SESSION_HEADER + f"## Checkpoint before this compaction ({CHECKPOINT})")
    assert "- step 11: keep the retry loop" in text
    assert "\n\necho-memory vault: schema" in text and "## Inbox\n" in text
    assert 8000 - len(text) < 200  # the brief had what the checkpoint left


def test_a_small_budget_still_gets_a_brief_within_it(tmp_path: Path) -> None:
    box = _full_vault(tmp_path)
    text = _context(session_start({"source": "startup"},
                                  lambda: box.ctx(ECHO_LOAD_BUDGET="200", ECHO_NOW=NOW)))
    assert len(text) <= 200, len(text)
    assert text.startswith("echo-memory vault: schema")  # no room for the header
