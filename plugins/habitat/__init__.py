"""habitat: a shared record of what agents do, their approved learnings, their failure
patterns (SPEC §7; issue 18's phases 0-2: record, distil, approve, inject, detect).

* the loom (``loom``, ``record``): an append-only log of session turns, tool calls,
  flags and habitat events, one JSON-lines file per day under ``<state_dir>/habitat/``;
* learnings and insights: stored, reinforced, approved by the operator; approved ones
  are vault notes, injected at session start;
* distil and detect: failures and connections found in the record, clustered into a
  pattern registry; the daily digest and ``habitat status``.

Every verb is an operation (``register_operations``), so it is in the CLI (``echo-memory
habitat ...``), over MCP and in the Claude Code plugin. The Claude Code plugin also gets
the hook recorder (``register_build_targets``, ``build_part``, ``hook_record``). This
module stays cheap to import: the verbs are registered by reference
(``operations_index``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from echo_core import hookimpl

if TYPE_CHECKING:
    from echo_core import BuildTarget, Operation, OperationRef, Register

BUILD_PART_NAME = "claude-code:habitat"


@hookimpl
def register_operations(register: Register[Operation[Any] | OperationRef]) -> None:
    """Register the habitat's verbs by reference."""
    from plugins.habitat.operations_index import HABITAT_OPERATIONS

    for ref in HABITAT_OPERATIONS:
        register(ref.name, ref)


@hookimpl
def register_build_targets(register: Register[BuildTarget]) -> None:
    """Contribute the hook recorder to the ``claude-code`` target (``build_part``): its
    scripts, and its hooks for the ``hooks.json`` the ``hooks_claude`` part writes."""
    from plugins.habitat.build_part import HabitatHooksPart

    register(BUILD_PART_NAME, HabitatHooksPart())


#: The name the habitat's session-start provider is registered under.
SESSION_CONTEXT_NAME = "habitat-insights"


@hookimpl
def register_session_contexts(register: Register[Any]) -> None:
    """Give a starting session the approved insights that match its situation, at most 5
    within 500 tokens (``insight_context``)."""
    register(SESSION_CONTEXT_NAME, insights_for_session)


def insights_for_session(ctx: Any, /, **situation: Any) -> list[str] | None:
    """The ``register_session_contexts`` provider (``insight_context.session_context``);
    without a learnings store (no learning was ever stored) None at once, importing
    nothing: every session start of every vault calls this. On a PostgreSQL vault (its
    storage has ``pg_transaction``) the store is the database's (``pg_session``)."""
    from plugins.habitat.paths import LEARNINGS_FILE, habitat_dir

    if not (habitat_dir(ctx) / LEARNINGS_FILE).exists():
        if not _on_postgres(ctx):
            return None
        from plugins.habitat.pg_session import pg_session_context

        return pg_session_context(ctx, **situation)
    from plugins.habitat.insight_context import session_context

    return session_context(ctx, **situation)


def _on_postgres(ctx: Any) -> bool:
    """Whether ``ctx``'s vault storage is PostgreSQL's (has ``pg_transaction``); False
    when the storage cannot even be made (the session start goes on without)."""
    try:
        storage = ctx.storage
    except Exception:  # noqa: BLE001 - no vault here: no habitat in a database either
        return False
    return callable(getattr(storage, "pg_transaction", None))
