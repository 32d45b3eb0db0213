"""How a tool call touches the vault: read or write, and which in-process lock it takes.

A tool function may carry two plain attributes (set them directly, or with
``tool_access`` inside this plugin; other plugins cannot import it, so they set them by
hand)::

    fn.echo_access = "read"            # or "write", or a callable(arguments) -> either
    fn.echo_lock_param = "path"        # optional: a write locks only this note path
    fn.echo_destructive = False        # optional: the MCP destructiveHint of a write

An unmarked function is treated as an entity-level write (serialised under the server's
one write lock): the safe default for a third-party tool.

``plan_for(function, arguments)`` turns the attributes and the call's arguments into an
``AccessPlan``: ``read`` (no in-process lock, runs in parallel), ``write`` keyed by the
normalised note path (per-path lock), or ``write`` with key ``None`` (the write lock).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

import attrs

from echo_core.paths import normalize_path

Access = Literal["read", "write"]
AccessRule = Access | Callable[[Mapping[str, Any]], Access]
F = TypeVar("F", bound=Callable[..., Any])


@attrs.frozen
class AccessPlan:
    """``access`` of one call and its lock key (``None`` = the entity-level write lock)."""

    access: Access
    lock_key: str | None = None

    @property
    def is_write(self) -> bool:
        """True when the call may change the vault."""
        return self.access == "write"


def tool_access(access: AccessRule, *, lock_param: str | None = None,
                destructive: bool = False) -> Callable[[F], F]:
    """Decorator: mark ``fn`` with ``echo_access``, ``echo_destructive`` (built-in writes
    only add or keep history, so False by default) and ``echo_lock_param``."""

    def mark(fn: F) -> F:
        fn.echo_access = access  # type: ignore[attr-defined]
        fn.echo_destructive = destructive  # type: ignore[attr-defined]
        if lock_param is not None:
            fn.echo_lock_param = lock_param  # type: ignore[attr-defined]
        return fn

    return mark


def write_unless(flag: str) -> Callable[[Mapping[str, Any]], Access]:
    """A rule: a write unless the boolean argument ``flag`` is true (``dry_run``)."""

    def rule(arguments: Mapping[str, Any]) -> Access:
        return "read" if arguments.get(flag) else "write"

    return rule


def write_when(flag: str) -> Callable[[Mapping[str, Any]], Access]:
    """A rule: a write only when the boolean argument ``flag`` is true (``apply``)."""

    def rule(arguments: Mapping[str, Any]) -> Access:
        return "write" if arguments.get(flag) else "read"

    return rule


def plan_for(function: Callable[..., Any], arguments: Mapping[str, Any]) -> AccessPlan:
    """The ``AccessPlan`` of calling ``function`` with ``arguments`` (validated values).

    Errors: ``EchoError`` 2 when the lock parameter holds a bad vault path (the same
    error the operation would give).
    """
    rule: Any = getattr(function, "echo_access", "write")
    access = rule(arguments) if callable(rule) else rule
    if access not in ("read", "write"):
        access = "write"
    if access == "read":
        return AccessPlan("read")
    param = getattr(function, "echo_lock_param", None)
    if param and isinstance(arguments.get(param), str):
        return AccessPlan("write", normalize_path(arguments[param]))
    return AccessPlan("write")
