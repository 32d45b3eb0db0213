"""Load spread over forked client processes, for the benches: ``shares(total, parts)``
cuts ``total`` clients into ``parts`` near-equal shares, ``run_parts(target, calls)``
runs ``target(*args)`` for each argument tuple, in this process when there is one and
in forked children otherwise, and returns their results in the order they finished."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["run_parts", "shares"]


def shares(total: int, parts: int) -> list[int]:
    """``total`` cut into ``parts`` shares differing by at most one, largest first."""
    return [total // parts + (i < total % parts) for i in range(parts)]


def _deliver(queue: Any, target: Callable[..., Any], args: tuple[Any, ...]) -> None:
    queue.put(target(*args))


def run_parts(target: Callable[..., Any], calls: Sequence[tuple[Any, ...]]) -> list[Any]:
    """``target(*args)`` for each of ``calls``: one runs here, several in forked
    children (results sent back through a queue)."""
    if len(calls) == 1:
        return [target(*calls[0])]
    import multiprocessing

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    children = [context.Process(target=_deliver, args=(queue, target, args)) for args in calls]
    for child in children:
        child.start()
    results = [queue.get() for _ in children]
    for child in children:
        child.join()
    return results
