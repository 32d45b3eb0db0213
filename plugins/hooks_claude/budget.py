"""A part of a hook's time budget: a step that must leave the hook time to answer."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

from plugins.hooks_claude.events import HookTimeout

__all__ = ["budget_share", "seconds_text"]


def seconds_text(seconds: float) -> str:
    """``seconds`` as people wrote it: ``0.05s``, ``2.4s``, ``8s`` (not rounded to a tenth,
    which would show a 0.05 s budget as 0.1 s); float noise past the microsecond dropped."""
    return f"{seconds:.6f}".rstrip("0").rstrip(".") + "s"


@contextlib.contextmanager
def budget_share(margin: float, what: str) -> Iterator[None]:
    """Run the block with the soft budget ending ``margin`` seconds early: ``HookTimeout``
    is raised there (at once when no more than ``margin`` is left), so the handler still
    has ``margin`` seconds to answer after it. On leaving, the budget's own alarm is armed
    again for the rest of the budget. Outside a budget (no alarm armed: a handler called
    directly, no SIGALRM, not the main thread) the block runs without a limit."""
    use_alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    left = signal.getitimer(signal.ITIMER_REAL)[0] if use_alarm else 0.0
    if left <= 0:
        yield
        return
    ends = time.monotonic() + left
    if left <= margin:
        raise HookTimeout(f"no time left for {what}")

    def on_alarm(signum: int, frame: Any) -> None:
        raise HookTimeout(f"{what} stopped {seconds_text(margin)} before the hook's budget")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, left - margin)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        signal.setitimer(signal.ITIMER_REAL, max(ends - time.monotonic(), 0.001))
