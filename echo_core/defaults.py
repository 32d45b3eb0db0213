"""The core's own ``trylast`` implementations of the policy hooks."""

from __future__ import annotations

from typing import Any

from echo_core.hookspecs import hookimpl


@hookimpl(trylast=True)
def gate_capture(request: Any, ctx: Any) -> None:
    """Default gate: let every capture through."""
    return None
