"""``ECHO_TRACE_PLUGINS=1``: one stderr line per hook call, through pluggy's monitoring.

Each line names the hook, the plugins that answered it (in call order) and, at the end,
what they returned or the exception that stopped the call, plus the time it took::

    echo-memory trace: register_rankers <- recall_bm25, echo_core = [None, None] (0.1 ms)

A call made inside another hook's call is indented one step per level.
"""

from __future__ import annotations

import reprlib
import sys
import time
from collections.abc import Callable, Mapping, Sequence

import pluggy

_SHORT = reprlib.Repr()
_SHORT.maxstring = 60
_SHORT.maxother = 60
_SHORT.maxlist = 6
_SHORT.maxdict = 4


def trace_hook_calls(pm: pluggy.PluginManager) -> Callable[[], None]:
    """Write one line per hook call of ``pm`` to ``sys.stderr``; returns the undo function.

    ``sys.stderr`` is looked up at each call, so a captured or redirected stream gets the
    lines. Tracing never changes a result or swallows an exception.
    """
    started: list[float] = []

    def before(hook_name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, object]) -> None:
        started.append(time.perf_counter())

    def after(
        outcome: pluggy.Result[object], hook_name: str, impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, object],
    ) -> None:
        took_ms = (time.perf_counter() - started.pop()) * 1000
        answering = ", ".join(impl.plugin_name for impl in reversed(impls)) or "no plugin"
        if outcome.exception is not None:
            exc = outcome.exception
            ending = f"raised {type(exc).__name__}: {_SHORT.repr(str(exc))}"
        else:
            ending = f"= {_SHORT.repr(outcome.get_result())}"
        indent = "  " * len(started)
        sys.stderr.write(
            f"echo-memory trace: {indent}{hook_name} <- {answering} {ending} ({took_ms:.1f} ms)\n"
        )

    return pm.add_hookcall_monitoring(before, after)
