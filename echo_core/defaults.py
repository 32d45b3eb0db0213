"""The core's own plugin: the built-in operations and the ``trylast`` policy defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from echo_core.hookspecs import Register, hookimpl

if TYPE_CHECKING:
    from echo_core.operations import Operation
    from echo_core.operations.lazy import OperationRef


@hookimpl(tryfirst=True)  # the core's verbs keep their names against a later claimant
def register_operations(register: Register[Operation[Any] | OperationRef]) -> None:
    """Register the built-in verbs (``echo_core.verbs``), by reference: each verb's module
    is imported only when a surface needs its declaration."""
    from echo_core.verbs import BUILTIN

    for ref in BUILTIN:
        register(ref.name, ref)


@hookimpl(trylast=True)
def gate_capture(request: Any, ctx: Any) -> None:
    """Default gate: let every capture through."""
    return
