"""Stop hook findings of the trust review: the one-time request to save survives mining
that runs out of time, a transcript path that is not a regular file is no transcript
(at once, never a blocking read), and a help or dry-run invocation is not a save."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.capture_kit import VaultBox
from tests.hook_kit import (  # noqa: F401 - fixtures box, project
    hook_box,
    hook_env,
    hook_project,
    payload,
    plant_held_lock,
    run_hook,
    seeded_vault,
    work_tools,
    write_transcript,
)

SESSION = "sess-trust-1"
PREFERENCE = "Always run the linter before you commit."


def _stop(box: VaultBox, project: Path, transcript: Path, *, active: bool = False,
          budget: str = "3") -> subprocess.CompletedProcess[str]:
    return run_hook("Stop", payload("Stop", SESSION, transcript, project, stop_hook_active=active,
                                    last_assistant_message="Done."),
                    hook_env(box, ECHO_HOOK_BUDGET_SECONDS=budget), project)


def _inbox(box: VaultBox) -> str:
    path = box.vault / "inbox/captures/inbox.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


# --- 1. the request survives mining that waits on a held vault lock -------------------------


def test_stop_still_asks_when_mining_waits_on_a_held_vault_lock(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    transcript = write_transcript(tmp_path / f"{SESSION}.jsonl", SESSION, project,
                                  prompts=[PREFERENCE, "fix the deploy script"],
                                  tools=work_tools(project))
    lock = plant_held_lock(box.vault)
    first = _stop(box, project, transcript)
    assert first.returncode == 0, first.stderr
    assert first.stdout, f"the request was lost: {first.stderr}"
    reply = json.loads(first.stdout)
    assert reply["decision"] == "block" and "save what was learned" in reply["reason"]
    assert "linter" not in _inbox(box)  # the mining gave up: nothing half-written
    lock.unlink()
    # the agent continues; its next Stop (stop_hook_active) mines what the first could not
    again = _stop(box, project, transcript, active=True, budget="8")
    assert (again.returncode, again.stdout) == (0, ""), again.stderr
    assert "linter" in _inbox(box).lower()


def test_stop_mining_without_a_held_lock_still_lands_in_the_same_stop(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    transcript = write_transcript(tmp_path / f"{SESSION}.jsonl", SESSION, project,
                                  prompts=[PREFERENCE], tools=work_tools(project))
    proc = _stop(box, project, transcript, budget="8")
    assert json.loads(proc.stdout)["decision"] == "block", proc.stderr
    assert "linter" in _inbox(box).lower()


def test_a_budget_share_ends_its_part_early_and_keeps_the_rest_of_the_budget() -> None:
    import signal

    from plugins.hooks_claude.budget import budget_share
    from plugins.hooks_claude.events import HookTimeout
    from plugins.hooks_claude.runner import time_budget

    with budget_share(1.0, "part"):  # outside a budget: no limit, no alarm armed
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    with time_budget(2.0, 30.0):
        started = time.monotonic()
        with pytest.raises(HookTimeout, match="part stopped"), budget_share(1.0, "part"):
            time.sleep(5)
        assert time.monotonic() - started < 1.5
        assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 1.0  # the budget's own end
        with pytest.raises(HookTimeout, match="no time left"), budget_share(1.5, "part"):
            pass


# --- 4. a transcript path that is not a regular file ----------------------------------------


def _read_in_thread(path: Path) -> tuple[threading.Thread, list[object]]:
    from plugins.hooks_claude.transcript import read_transcript

    out: list[object] = []
    worker = threading.Thread(target=lambda: out.append(read_transcript(str(path))), daemon=True)
    worker.start()
    return worker, out


def test_a_fifo_transcript_is_no_transcript_at_once(tmp_path: Path) -> None:
    from plugins.hooks_claude.transcript import TranscriptSummary

    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    worker, out = _read_in_thread(fifo)
    try:
        worker.join(timeout=3)
        assert not worker.is_alive(), "read_transcript blocked on a FIFO"
        assert out == [TranscriptSummary()]
    finally:
        if worker.is_alive():  # release the old code's blocked open(): a writer, then EOF
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            worker.join(timeout=3)


@pytest.mark.parametrize("event", ["Stop", "PreCompact"])
def test_stop_and_pre_compact_on_a_fifo_transcript_end_quietly_before_the_budget(
        box: VaultBox, project: Path, tmp_path: Path, event: str) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    started = time.monotonic()
    proc = run_hook(event, payload(event, SESSION, fifo, project, stop_hook_active=False,
                                   trigger="auto"),
                    hook_env(box, ECHO_HOOK_BUDGET_SECONDS="9"), project)
    elapsed = time.monotonic() - started
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    assert "budget" not in proc.stderr  # it did not run out of time: it never waited
    assert elapsed < 8, elapsed
    assert not list((box.vault / "_agent/memory/working").glob("*checkpoint*"))


# --- 5. help and dry-run invocations are not saves ------------------------------------------


@pytest.mark.parametrize(("command", "saves"), [
    ("echo-memory capture --help", False),
    ("echo-memory capture -h", False),
    ('echo-memory capture "X" --kind person --help', False),
    ("echo-memory --help capture", False),
    ("echo-memory reflect --help", False),
    ("echo-memory reflect p.json --apply --help", False),
    ("echo-memory session-end --help", False),
    ("echo-memory session-end b.json --apply -h", False),
    ("echo-memory capture --help && echo-memory capture X --dry-run", False),
    ("echo-memory capture --help; echo-memory capture \"X\" --kind person", True),
    ('echo-memory capture "X" --kind person', True),
    ("echo-memory session-end b.json --apply", True),
    ('echo-memory capture "X" --body "-h is the short help flag"', True),
])
def test_help_and_dry_run_invocations_are_not_saves(command: str, saves: bool) -> None:
    from plugins.hooks_claude.transcript import is_save_command

    assert is_save_command(command) is saves


def test_stop_asks_after_the_agent_only_read_the_capture_help(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    tools = [*work_tools(project), ("Bash", {"command": "echo-memory capture --help",
                                             "description": "how to save"})]
    transcript = write_transcript(tmp_path / "t.jsonl", SESSION, project, prompts=["fix it"],
                                  tools=tools)
    proc = _stop(box, project, transcript, budget="8")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["decision"] == "block"
