"""The change follower of ``serve`` on a shared vault (``plugins.transport_mcp.
change_follow``) while the database is away: it tries again at most ``MAX_BACKOFF_S``
apart (captures queued meanwhile are replayed on reconnect, so the back-off bounds how
long they wait once the database is back), and it logs a failure as a warning once,
not once per attempt. Driven in the test's thread with a fake listener: no database,
no sleeping."""

from __future__ import annotations

import logging

import pytest

from plugins.transport_mcp.change_follow import MAX_BACKOFF_S, ChangeFollower


class _Stop:
    """Stands in for the follower's ``stopping`` event: records each back-off asked for
    and returns at once."""

    def __init__(self) -> None:
        self.flag = False
        self.waits: list[float] = []

    def is_set(self) -> bool:
        return self.flag

    def wait(self, timeout: float) -> bool:
        self.waits.append(timeout)
        return self.flag

    def set(self) -> None:
        self.flag = True


class _Listener:
    """A change listener whose ``open`` fails with each of ``failures`` in turn, then
    succeeds; its first ``wait`` ends the run."""

    def __init__(self, failures: list[Exception], stop: _Stop) -> None:
        self.failures = failures
        self.stop = stop
        self.opened = 0

    def open(self) -> None:
        if self.failures:
            raise self.failures.pop(0)
        self.opened += 1

    def wait(self, timeout: float) -> int | None:
        self.stop.set()
        return None

    def close(self) -> None:
        pass


def _run(failures: list[Exception]) -> tuple[_Stop, list[int]]:
    stop = _Stop()
    listener = _Listener(failures, stop)
    connected: list[int] = []
    follower = ChangeFollower(lambda: listener, lambda: None,
                              on_connect=lambda: connected.append(1))
    follower.stopping = stop  # type: ignore[assignment]
    follower.run()
    assert listener.opened == 1 and follower.reconnects == len(stop.waits)
    return stop, connected


def test_a_long_outage_is_retried_at_most_max_backoff_apart() -> None:
    stop, connected = _run([ConnectionRefusedError("refused") for _ in range(12)])
    assert stop.waits[:4] == [0.5, 1.0, 2.0, 4.0]
    assert max(stop.waits) == MAX_BACKOFF_S <= 5.0
    assert connected == [1]  # back: the outbox is replayed once


def test_a_failure_is_warned_once_and_a_new_one_again(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, "echo_memory.mcp")
    failures: list[Exception] = [ConnectionRefusedError("refused") for _ in range(6)]
    failures.append(TimeoutError("timed out"))
    _run(failures)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 2 and "refused" in warned[0] and "timed out" in warned[1]
    repeats = [r for r in caplog.records if r.levelno == logging.DEBUG
               and "change feed: interrupted" in r.getMessage()]
    assert len(repeats) == 5
