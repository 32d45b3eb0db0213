"""``start_forked``: a computation runs in a forked child and gives the same answer as
running it here; whatever goes wrong in the child, the answer is computed here."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from echo_core import forked_work
from echo_core.forked_work import fork_allowed, start_forked
from tests.fork_kit import force_forking

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    force_forking(monkeypatch)


def _pid_and_square(n: int) -> tuple[int, int]:
    return os.getpid(), n * n


def test_the_task_runs_in_a_child_and_its_result_comes_back(forking: None) -> None:
    work = start_forked(lambda: _pid_and_square(12))
    assert work.pid is not None
    pid, square = work.result()
    assert square == 144 and pid != os.getpid()


def test_echo_fork_0_runs_the_task_here(forking: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ECHO_FORK", "0")
    assert not fork_allowed()
    work = start_forked(lambda: _pid_and_square(3))
    assert work.pid is None and work.result() == (os.getpid(), 9)


def test_other_threads_running_means_no_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked_work.os, "cpu_count", lambda: 2)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not fork_allowed({})
        assert start_forked(lambda: 1).pid is None
    finally:
        stop.set()
        thread.join()


def test_a_result_that_cannot_be_pickled_is_computed_here(forking: None) -> None:
    here = os.getpid()
    work = start_forked(lambda: (lambda: None, os.getpid()))  # a lambda does not pickle
    assert work.pid is not None
    _fn, pid = work.result()
    assert pid == here


def test_a_child_killed_midway_leaves_the_answer_to_this_process(forking: None,
                                                                tmp_path: Path) -> None:
    started = tmp_path / "started"

    def slow() -> int:
        if os.getpid() != parent:
            started.write_text("x")
            signal.pause()  # the child waits to be killed
        return 7

    parent = os.getpid()
    work = start_forked(slow)
    assert work.pid is not None
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(work.pid, signal.SIGKILL)
    assert work.result() == 7


def test_an_error_in_the_task_is_raised_here_as_it_would_be_without_a_fork(forking: None) -> None:
    def broken() -> int:
        raise ValueError("bad input")

    work = start_forked(broken)
    with pytest.raises(ValueError, match="bad input"):
        work.result()


def test_cancel_ends_and_reaps_the_child(forking: None) -> None:
    work = start_forked(signal.pause)
    pid = work.pid
    assert pid is not None
    work.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: no such child
    assert work.pid is None
