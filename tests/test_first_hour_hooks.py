"""Issue 13, Claude Code hooks: checkpoints and people, the brief after a compaction, the
brief's agent log, and SessionStart when memory is unavailable."""

from __future__ import annotations

import io
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from echo_core.ops.load import load
from plugins.hooks_claude.checkpoint import write_checkpoint
from plugins.hooks_claude.handlers import session_start
from plugins.hooks_claude.runner import run_hook as run_in_process
from tests.capture_kit import VaultBox
from tests.hook_kit import (
    context_of,
    hook_env,
    payload,
    run_hook,
    seeded_vault,
    work_tools,
    write_transcript,
)


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return seeded_vault(tmp_path / "box")


@pytest.fixture
def project(tmp_path: Path) -> Path:  # the agent's working directory
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


SESSION = "a1b2c3d4-e5f6"
CHECKPOINT = "_agent/memory/working/2026-03-01-checkpoint-a1b2c3d4.md"


def _compact(box: VaultBox, project: Path, tmp_path: Path, **fields: Any) -> None:
    transcript = write_transcript(
        tmp_path / "t.jsonl", SESSION, project, tools=work_tools(project),
        prompts=["ask Ada Lovelace how the deploy script should log", "keep the retry loop"])
    fields = {"trigger": "auto", "custom_instructions": "", **fields}
    assert write_checkpoint(payload("PreCompact", SESSION, transcript, project, **fields),
                            box.ctx) == CHECKPOINT


# --- item 7: checkpoints link out, durable notes do not collect them -------------------------


def test_a_checkpoint_naming_a_person_links_to_her_and_her_note_does_not_link_back(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    _compact(box, project, tmp_path)
    _compact(box, project, tmp_path, trigger="manual")  # the update path autolinks too
    assert "[[ada-lovelace]]" in box.read(CHECKPOINT)
    assert "checkpoint" not in box.read("resources/people/ada-lovelace.md")


def test_two_durable_notes_naming_each_other_still_link_both_ways(box: VaultBox) -> None:
    assert box.capture("Deploy retro", kind="meeting", body="Ada Lovelace ran it.").ok
    meeting = next((box.vault / "meetings").rglob("*deploy-retro.md")).read_text("utf-8")
    assert "[[ada-lovelace]]" in meeting
    assert "deploy-retro" in box.read("resources/people/ada-lovelace.md")


def test_session_start_after_a_compaction_shows_the_latest_checkpoint(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    _compact(box, project, tmp_path)
    _compact(box, project, tmp_path, trigger="manual", custom_instructions="keep the plan")
    out = session_start(payload("SessionStart", SESSION, None, project, source="compact"),
                        box.ctx)
    assert out is not None
    text = out["hookSpecificOutput"]["additionalContext"]
    section = text.split("## Checkpoint before this compaction", 1)[1].split("\n\n", 1)[0]
    assert CHECKPOINT in section
    assert "(manual)" in section and "Compaction instructions: keep the plan" in section
    assert "- ask Ada Lovelace how the deploy script should log" in section
    assert "- src/mod0.py" in section
    assert "## Scope" in text  # the brief follows


def test_session_start_on_startup_shows_no_checkpoint(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    _compact(box, project, tmp_path)
    out = session_start(payload("SessionStart", SESSION, None, project, source="startup"),
                        box.ctx)
    assert out is not None
    assert "## Checkpoint" not in out["hookSpecificOutput"]["additionalContext"]


# --- item 5: the brief is not a list of capture lines ----------------------------------------


def test_the_brief_sums_up_capture_lines_and_keeps_the_agents_own(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    for i in range(12):
        assert box.capture(f"Topic {i} notes", kind="concept", body="x").ok
    assert box.capture("Topic 3 notes", kind="concept", body="more").ok
    daily = box.vault / "journal/daily/2026-03-01.md"
    daily.write_text(daily.read_text("utf-8").rstrip("\n")
                     + "\n- 2026-03-01: shipped the recall fix\n", encoding="utf-8")
    digest = load(box.ctx(), brief=True).data.digest
    log = digest.split("## Agent Log (2026-03-01)\n", 1)[1].split("\n\n", 1)[0].splitlines()
    captures = ("captured today: created 12 notes ([[topic-0-notes]], [[topic-1-notes]], "
                "[[topic-2-notes]], [[topic-3-notes]], [[topic-4-notes]], [[topic-5-notes]], "
                "[[topic-6-notes]], [[topic-7-notes]] and 4 more); updated 1 note "
                "([[topic-3-notes]])")
    assert log == [captures, "- 2026-03-01: shipped the recall fix"]


# --- item 18: SessionStart says when memory is unavailable -----------------------------------


def _one_line_notice(stdout: str) -> str:
    text = context_of(stdout, "SessionStart")
    assert "\n" not in text
    assert text.startswith("echo-memory: memory unavailable: ")
    return text


def test_session_start_says_memory_is_unavailable_when_the_vault_is_missing(
        tmp_path: Path, project: Path) -> None:
    box = VaultBox(tmp_path / "gone").init()  # this machine used it as a vault
    shutil.rmtree(box.vault)  # a drive not mounted; nothing cached either
    proc = run_hook("SessionStart", payload("SessionStart", "s", None, project, source="startup"),
                    hook_env(box, ECHO_HOOK_DEBUG="1"), project)
    assert proc.returncode == 0
    text = _one_line_notice(proc.stdout)
    assert str(box.vault) in text and "mount the drive or restore the folder" in text, text


def test_session_start_says_a_path_never_used_as_a_vault_is_not_one(
        tmp_path: Path, project: Path) -> None:
    box = VaultBox(tmp_path / "typo")
    box.vault.rmdir()  # a mistyped path: no folder, never a vault here
    proc = run_hook("SessionStart", payload("SessionStart", "s", None, project, source="startup"),
                    hook_env(box), project)
    assert proc.returncode == 0
    text = _one_line_notice(proc.stdout)
    assert "is not an echo-memory vault" in text and str(box.vault) in text, text


def test_session_start_says_how_to_initialise_an_uninitialised_vault(
        tmp_path: Path, project: Path) -> None:
    bare = VaultBox(tmp_path / "bare")
    proc = run_hook("SessionStart", payload("SessionStart", "s", None, project, source="clear"),
                    hook_env(bare), project)
    assert proc.returncode == 0
    assert f"`echo-memory init --vault {bare.vault}`" in _one_line_notice(proc.stdout)


def test_session_start_says_memory_is_unavailable_when_loading_runs_out_of_time(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    def slow_ctx() -> Any:
        time.sleep(5)
        return box.ctx()

    stdin = io.BytesIO(json.dumps({"session_id": "s", "source": "startup"}).encode())
    started = time.monotonic()
    out = run_in_process("SessionStart", slow_ctx, stdin, {"ECHO_HOOK_BUDGET_SECONDS": "0.3"})
    assert time.monotonic() - started < 4
    assert out is not None
    assert "ran out of time" in _one_line_notice(out)


@pytest.mark.parametrize("source", ["resume", "fork"])
def test_session_start_stays_quiet_on_resume_even_when_memory_is_unavailable(
        tmp_path: Path, source: str) -> None:
    def broken_ctx() -> Any:
        raise RuntimeError("no vault")

    stdin = io.BytesIO(json.dumps({"session_id": "s", "source": source}).encode())
    assert run_in_process("SessionStart", broken_ctx, stdin, {}) is None
