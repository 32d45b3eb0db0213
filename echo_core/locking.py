"""Building blocks for vault locks, shared by every storage backend.

A backend's lock has two layers: a cross-process owner record (a lock file, a lock note,
...) that only the backend knows how to create and remove, and the in-process layer that
is the same everywhere — re-entrant within a thread, exclusive between threads, one lock
object per vault per process (``ProcessRegistry``), forgotten in a forked child.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from echo_core.errors import LockHeldError

T = TypeVar("T")


class StaleLockWarning(UserWarning):
    """A stale vault lock (dead owner or too old) was broken."""


def pid_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists on this host (unknown counts as alive: a
    lock is never broken on a guess)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists but not ours (PermissionError), or unknown
    return True


class ReentrantHold:
    """The in-process layer of a vault lock: re-entrant per thread, exclusive between
    threads; the backend's owner record is taken on the outermost entry only."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._token = ""

    @contextlib.contextmanager
    def hold(self, timeout: float, acquire: Callable[[float], str],
             release: Callable[[str], None]) -> Iterator[None]:
        """Hold for the ``with`` block. ``acquire(deadline)`` takes the cross-process
        owner record and returns its token; ``release(token)`` gives it back. Another
        thread holding past ``timeout`` is ``EchoError`` 75."""
        deadline = time.monotonic() + max(0.0, timeout)
        if not self._thread_lock.acquire(timeout=max(0.0, timeout)):
            raise LockHeldError(
                f"vault lock {self.label} is held by another thread of this process "
                f"(pid {os.getpid()}); wait for it to finish and retry",
            )
        try:
            if self._depth == 0:
                self._token = acquire(deadline)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    release(self._token)
                    self._token = ""
        finally:
            self._thread_lock.release()


class ProcessRegistry(Generic[T]):
    """One object per key per process (e.g. per vault), emptied in a forked child (which
    holds none of its parent's locks)."""

    def __init__(self) -> None:
        self._items: dict[str, T] = {}
        self._guard = threading.Lock()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forget)

    def get(self, key: str, factory: Callable[[], T]) -> T:
        """The object for ``key``, built by ``factory`` on first use."""
        with self._guard:
            item = self._items.get(key)
            if item is None:
                item = self._items[key] = factory()
            return item

    def _forget(self) -> None:
        self._items = {}
        self._guard = threading.Lock()
