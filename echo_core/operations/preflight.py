"""Running an operation as every surface does: the same checks first, the same errors.

``run_operation(op, ctx, params)`` is what the CLI, the MCP server and ``invoke`` call
instead of ``op.run``. Before the run: a broken config file fails every operation that
``needs_config`` (exit 78, the file named), and ``needs_vault`` operations get
``echo_core.vault_seen.require_vault`` (a path that is not a vault: exit 78, one message
for every verb). During the run: a missing vault folder the operation meets becomes
``vault_missing_error`` (69 "mount or restore" for a folder this machine used, 78 "not a
vault" otherwise), so no verb reports it in its own words. A 78 about the vault adds,
for a vault path given relative, that it was taken from the current folder. An operation declared
``fresh`` first lets the indexes catch up with notes edited outside echo-memory
(``echo_core.ops.freshness.freshen_for``). After a run that succeeded, the notes it
wrote are recorded as seen (``echo_core.own_writes``), so the next check does not take
them for hand edits.
"""

from __future__ import annotations

from typing import Any

from echo_core.errors import EchoError, NotConfiguredError
from echo_core.models import Envelope
from echo_core.operations.declaration import Operation
from echo_core.protocols import VaultMissing


def check_before_run(op: Operation[Any], ctx: Any) -> None:
    """The checks of the module docstring (raises their errors)."""
    from echo_core.vault_seen import require_vault

    problem = getattr(ctx.config, "problem", "")
    if problem and op.needs_config:
        raise NotConfiguredError(problem)
    if op.needs_vault:
        try:
            require_vault(ctx)
        except NotConfiguredError as error:
            raise _said_relative(ctx, error) from None


def _said_relative(ctx: Any, error: NotConfiguredError) -> NotConfiguredError:
    """``error`` (the vault is not one: 78), saying also that the vault path was
    relative and taken from the current folder when it was (``Config.vault_relative``):
    the error names it made absolute, which may not be the folder meant."""
    given = getattr(ctx.config, "vault_relative", "")
    if not given:
        return error
    return NotConfiguredError(f"{error.message} (the vault path {given!r} was relative: "
                              "it was taken from the current folder)")


def _own_writes(op: Operation[Any], ctx: Any) -> Any:
    """``ctx.own_writes`` (None for a context without it). It needs the vault's storage:
    when no storage plugin opens the vault, an operation that does not need the vault
    (``doctor``, which reports that very problem) runs without it; any other raises."""
    try:
        return getattr(ctx, "own_writes", None)
    except EchoError:
        if op.needs_vault:
            raise
        return None


def run_operation(op: Operation[Any], ctx: Any, params: Any) -> Envelope[Any]:
    """``op.run(ctx, params)`` after ``check_before_run``; a missing vault folder met on
    the way is reported as ``vault_missing_error`` (a ``BackendUnavailable`` or 78)."""
    check_before_run(op, ctx)
    own = _own_writes(op, ctx)
    try:
        if op.fresh is not None:
            from echo_core.ops.freshness import freshen_for

            freshen_for(ctx, op.fresh)
        if own is not None:
            own.forget()  # the check's own syncs are recorded by the check
        done = op.run(ctx, params)
    except VaultMissing as down:
        if own is not None:
            own.forget()
        if not op.needs_vault:
            raise
        from echo_core.vault_seen import vault_missing_error

        missing = vault_missing_error(ctx, down)
        if isinstance(missing, NotConfiguredError):
            missing = _said_relative(ctx, missing)
        raise missing from None
    except BaseException:
        if own is not None:
            own.forget()
        raise
    if own is not None:
        own.settle(ctx)
    return done
