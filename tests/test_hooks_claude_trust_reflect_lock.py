"""Mining findings of the trust review on the vault lock: two sessions ending at once and
stating the same preference give one inbox line (the "already in the inbox" check and
the writes share one lock hold), and the mining of Stop and SessionEnd gives up after a
short wait for a lock another process holds, leaving the session's mark where it was
(the next Stop mines that part), instead of waiting until the hook's budget ran out."""

from __future__ import annotations

import threading
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from echo_core.ops import session_reflection
from echo_core.ops.session_reflection import read_mark, reflect_session_transcript
from tests.capture_kit import VaultBox
from tests.hook_kit import (  # noqa: F401 - fixtures box, project
    hook_box,
    hook_env,
    hook_project,
    payload,
    plant_held_lock,
    run_hook,
)
from tests.transcript_kit import prompt_session

PREFER = "Always use pytest, not unittest, for new tests."
#: Far below Stop's 8 s budget (the mining waited until 1 s before it: 7 s every Stop).
QUICK = 5.0


def _transcript(tmp_path: Path, session: str, prompts: list[str]) -> Path:
    path = tmp_path / f"{session}.jsonl"
    path.write_bytes(prompt_session(session, prompts))
    return path


def _mined_lines(box: VaultBox) -> list[str]:
    path = box.vault / "inbox/captures/inbox.md"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return [line for line in text.splitlines() if "from Claude Code session" in line]


def test_two_sessions_ending_at_once_inbox_a_preference_both_stated_once(
        box: VaultBox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first session has checked the inbox and waits (a hook point) until the second
    has checked it too, or waits for the vault lock to: before the fix both checks saw
    no line and both wrote one; now the second checks after the first wrote."""
    first_ctx, second_ctx = box.ctx(), box.ctx()
    transcripts = [_transcript(tmp_path, s, ["fix the test", PREFER]) for s in ("end-a", "end-b")]
    first_checked, second_arrived = threading.Event(), threading.Event()
    errors: list[BaseException] = []
    inbox_text = session_reflection._inbox_text
    storage_type = type(first_ctx.vault.storage)
    lock = storage_type.lock

    def checking(ctx: Any) -> str:
        text = inbox_text(ctx)
        if threading.current_thread() is first:
            first_checked.set()
            assert second_arrived.wait(30), "the second session never came"
        else:
            second_arrived.set()
        return text

    def locking(self: Any, timeout: float = 10.0) -> AbstractContextManager[None]:
        if first_checked.is_set() and threading.current_thread() is not first:
            second_arrived.set()  # the second is about to wait for the lock
        return lock(self, timeout)

    def end_first() -> None:
        try:
            reflect_session_transcript(first_ctx, "end-a", str(transcripts[0]),
                                       deadline=time.monotonic() + 60)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    monkeypatch.setattr(session_reflection, "_inbox_text", checking)
    monkeypatch.setattr(storage_type, "lock", locking)
    first = threading.Thread(target=end_first)
    first.start()
    assert first_checked.wait(30)
    reflect_session_transcript(second_ctx, "end-b", str(transcripts[1]),
                               deadline=time.monotonic() + 60)
    first.join(60)
    assert not first.is_alive() and errors == []
    lines = _mined_lines(box)
    assert len(lines) == 1, lines
    assert "Always use pytest, not unittest" in lines[0]
    for session, transcript in zip(("end-a", "end-b"), transcripts, strict=True):
        assert read_mark(box.ctx(), session).offset == transcript.stat().st_size


def test_mining_locked_out_writes_nothing_and_keeps_the_mark(box: VaultBox,
                                                              tmp_path: Path) -> None:
    transcript = _transcript(tmp_path, "s-locked", [PREFER])
    lock = plant_held_lock(box.vault)
    done = reflect_session_transcript(box.ctx(), "s-locked", str(transcript),
                                      deadline=time.monotonic() + 30, lock_wait=0.2)
    assert done is not None and done.locked and done.written == () and done.offset == 0
    assert _mined_lines(box) == [] and read_mark(box.ctx(), "s-locked").offset == 0
    lock.unlink()
    again = reflect_session_transcript(box.ctx(), "s-locked", str(transcript),
                                       deadline=time.monotonic() + 30, lock_wait=0.2)
    assert again is not None and not again.locked and len(again.written) == 1
    assert read_mark(box.ctx(), "s-locked").offset == transcript.stat().st_size


@pytest.mark.parametrize("event", ["Stop", "SessionEnd"])
def test_stop_and_session_end_give_up_quickly_on_a_held_lock_and_say_so(
        box: VaultBox, project: Path, tmp_path: Path, event: str) -> None:
    session = f"s-held-{event.lower()}"
    transcript = _transcript(tmp_path, session, [PREFER])
    lock = plant_held_lock(box.vault)
    fields: dict[str, Any] = ({"stop_hook_active": True, "last_assistant_message": "Done."}
                              if event == "Stop" else {"reason": "other"})
    started = time.monotonic()
    proc = run_hook(event, payload(event, session, transcript, project, **fields),
                    hook_env(box), project)
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert (f"echo-memory hook {event}: reflection skipped: the vault lock is held by another "
            "process (waited 1.0s); the transcript stays marked at byte 0") in proc.stderr
    assert took < QUICK, f"{event} stalled {took:.1f}s on the held lock"
    assert _mined_lines(box) == []
    assert read_mark(box.ctx(), session).offset == 0
    lock.unlink()
    later = run_hook("Stop", payload("Stop", session, transcript, project,
                                     stop_hook_active=True, last_assistant_message="Done."),
                     hook_env(box), project)
    assert later.returncode == 0 and "reflection" not in later.stderr, later.stderr
    assert len(_mined_lines(box)) == 1
    assert read_mark(box.ctx(), session).offset == transcript.stat().st_size
