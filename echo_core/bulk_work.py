"""Whole-vault work without the cyclic garbage collector's passes.

Reading and parsing every note of a large vault allocates millions of small objects
(frontmatter dicts, token sets, entities) that stay alive until the work ends and form
no reference cycles. Each of them counts towards the collector's thresholds, so it runs
again and again over an ever larger heap that holds nothing to collect: a third of a
100k-note ``lint`` went to those passes. ``collector_paused()`` turns the collector off
for the span of such work; reference counting still frees every object the moment it is
dropped, and the collector runs again as soon as the outermost pause ends.

Nested and concurrent pauses (threads of a server) are counted: the collector comes back
only when the last one ends, and only if it was on before the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_state = {"depth": 0, "was_enabled": False}


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause cyclic garbage collection while the block runs (module docstring)."""
    with _LOCK:
        if _state["depth"] == 0:
            _state["was_enabled"] = gc.isenabled()
            gc.disable()
        _state["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _state["depth"] -= 1
            if _state["depth"] == 0 and _state["was_enabled"]:
                gc.enable()
