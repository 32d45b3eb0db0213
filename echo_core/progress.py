"""Progress of long operations, shown by whichever surface runs them.

An operation calls ``report(done, total)`` as it goes; a surface that can show progress
(the CLI's bar on stderr) wraps the call in ``reporting(callback)``. Without one,
``report`` does nothing. Scoped to the running call (a ``ContextVar``), never stored on
the context.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

Reporter = Callable[[int, int], None]
_REPORTER: ContextVar[Reporter | None] = ContextVar("echo_progress", default=None)


@contextlib.contextmanager
def reporting(callback: Reporter) -> Iterator[None]:
    """Send every ``report(done, total)`` made inside the block to ``callback``."""
    token = _REPORTER.set(callback)
    try:
        yield
    finally:
        _REPORTER.reset(token)


def wanted() -> bool:
    """True when a surface shows progress (so counting the total is worth it)."""
    return _REPORTER.get() is not None


def report(done: int, total: int) -> None:
    """Tell the surface ``done`` of ``total`` units are finished."""
    callback = _REPORTER.get()
    if callback is not None:
        callback(done, total)
