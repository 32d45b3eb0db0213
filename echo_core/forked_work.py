"""A pure computation run on another core, in a forked child process.

``start_forked(task)`` forks a child that runs ``task()`` on a copy-on-write image of
this process (so it sees every object already built, nothing to send it) and pickles its
result into an unnamed temporary file; ``ForkedWork.result()`` waits for the child and
unpickles it. Only for tasks that compute: the child must write nothing, lock nothing
and use no connection it inherited, and it ends with ``os._exit`` (no ``atexit``
handlers, no buffers of the parent flushed twice).

Nothing is forked where that is unsafe or pointless: no ``os.fork`` (Windows), one core,
other threads running (a server: a lock one of them holds would stay held in the child
forever), or ``ECHO_FORK=0``. Then, and whenever the child fails (killed, an error, a
result that does not pickle), ``result()`` runs ``task()`` in this process, so the
answer is always the same as running it here. ``cancel()`` ends a child whose result
will not be asked for.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import IO, Generic, TypeVar

T = TypeVar("T")


def fork_allowed(env: Mapping[str, str] | None = None) -> bool:
    """Whether a task may be forked here now (module docstring)."""
    environ = os.environ if env is None else env
    return (hasattr(os, "fork") and (os.cpu_count() or 1) > 1
            and threading.active_count() == 1 and environ.get("ECHO_FORK", "1") != "0")


class ForkedWork(Generic[T]):
    """One task, running in a child (``pid``) or waiting to run here (``pid`` None)."""

    def __init__(self, task: Callable[[], T], pid: int | None, out: IO[bytes] | None) -> None:
        self._task = task
        self.pid = pid
        self._out = out

    def result(self) -> T:
        """The task's result: the child's, or computed here (module docstring)."""
        pid, out = self.pid, self._out
        self.pid, self._out = None, None
        if pid is None or out is None:
            return self._task()
        import pickle  # only a process that forked pays these imports

        try:
            _, status = os.waitpid(pid, 0)
            if os.waitstatus_to_exitcode(status) == 0:
                out.seek(0)
                try:
                    value: T = pickle.load(out)
                    return value
                except Exception:  # noqa: BLE001, S110 - a torn result: compute it here
                    pass
        finally:
            out.close()
        return self._task()

    def cancel(self) -> None:
        """End the child, if any, without waiting for its result."""
        pid, out = self.pid, self._out
        self.pid, self._out = None, None
        if pid is not None:
            import signal

            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
        if out is not None:
            out.close()


def _run_child(task: Callable[[], object], out: IO[bytes]) -> None:
    """In the child: run, write the pickled result, leave at once (never returns)."""
    import pickle

    code = 1
    try:
        pickle.dump(task(), out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()
        code = 0
    except BaseException:  # noqa: BLE001, S110 - the parent computes it instead
        pass
    finally:
        os._exit(code)


def start_forked(task: Callable[[], T], env: Mapping[str, str] | None = None) -> ForkedWork[T]:
    """Start ``task`` in a forked child where allowed (module docstring)."""
    if not fork_allowed(env):
        return ForkedWork(task, None, None)
    import tempfile

    out = tempfile.TemporaryFile()  # noqa: SIM115 - closed by result() or cancel()
    try:
        pid = os.fork()
    except OSError:
        out.close()
        return ForkedWork(task, None, None)
    if pid == 0:
        _run_child(task, out)
    return ForkedWork(task, pid, out)
