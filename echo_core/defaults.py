"""The core's own plugin: the built-in operations and the ``trylast`` policy defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from echo_core.hookspecs import Register, hookimpl

if TYPE_CHECKING:
    from echo_core.operations import Operation


@hookimpl(tryfirst=True)  # the core's verbs keep their names against a later claimant
def register_operations(register: Register[Operation[Any]]) -> None:
    """Register the built-in verbs (``echo_core.verbs``)."""
    from echo_core.verbs import builtin_operations

    for op in builtin_operations():
        register(op.name, op)


@hookimpl(trylast=True)
def gate_capture(request: Any, ctx: Any) -> None:
    """Default gate: let every capture through."""
    return
