"""How a tool call touches the vault: read or write, and which in-process lock it takes.

Derived from the operation's declaration (``Operation.access`` and ``lock_param``):
``plan_for(op, params)`` gives an ``AccessPlan``: ``read`` (no in-process lock, runs in
parallel), ``write`` keyed by the normalised note path of ``lock_param`` (per-path lock),
or ``write`` with key ``None`` (the server's one entity-level write lock). A
``lock_param`` may name something other than a note (the habitat's ``habitat_record``
locks per session id: one session's records in call order, sessions in parallel); a
value that is no valid note path is a key of its own (and a note verb given one fails
with the path's error when it runs).
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from echo_core import EchoError, Operation, normalize_path

Access = Literal["read", "write"]


@attrs.frozen
class AccessPlan:
    """``access`` of one call and its lock key (``None`` = the entity-level write lock)."""

    access: Access
    lock_key: str | None = None

    @property
    def is_write(self) -> bool:
        """True when the call may change the vault."""
        return self.access == "write"


def plan_for(op: Operation[Any], params: Any) -> AccessPlan:
    """The ``AccessPlan`` of running ``op`` with ``params`` (already validated).

    Never raises for the lock parameter's value: one that is no note path is keyed as
    given (``"\\0"`` first, so it is no path's key)."""
    if op.access_for(params) == "read":
        return AccessPlan("read")
    value = getattr(params, op.lock_param, None) if op.lock_param else None
    if isinstance(value, str):
        try:
            return AccessPlan("write", normalize_path(value))
        except EchoError:
            return AccessPlan("write", "\0" + value)
    return AccessPlan("write")
