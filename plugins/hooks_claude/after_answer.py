"""Work a hook handler leaves for after its answer is written (SessionStart's full
freshness pass): ``after_answer(task)`` queues it inside ``runner.answer_hook``, which
returns the queue with the output; ``finish`` runs it. Its own module so the handlers and
the runner both import it, and not each other."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

__all__ = ["AfterAnswer", "after_answer", "collecting", "finish"]

#: Work left for after the answer: ``task(background)``; ``background`` says the task
#: may hand itself to a detached process (the hook process is about to exit).
AfterAnswer = Callable[[bool], None]
_LATER: contextvars.ContextVar[list[AfterAnswer] | None] = contextvars.ContextVar(
    "hook_after_answer", default=None)


def after_answer(task: AfterAnswer) -> None:
    """Leave ``task`` to run once the answer is written (within ``answer_hook``); outside
    one (a handler called directly) it runs now, in this process."""
    later = _LATER.get()
    if later is None:
        finish([task], background=False)
    else:
        later.append(task)


def finish(tasks: list[AfterAnswer], *, background: bool) -> None:
    """Run the tasks ``answer_hook`` returned; a failing one is skipped (fail-safe)."""
    for task in tasks:
        try:
            task(background)
        except Exception:  # noqa: BLE001, S110 - the answer is out; nothing to report to
            pass


@contextlib.contextmanager
def collecting() -> Iterator[list[AfterAnswer]]:
    """Within the block, ``after_answer`` queues its tasks in the list it yields."""
    later: list[AfterAnswer] = []
    token = _LATER.set(later)
    try:
        yield later
    finally:
        _LATER.reset(token)
