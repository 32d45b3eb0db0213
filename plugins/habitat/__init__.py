"""habitat: a shared record of what agents do, their approved learnings, their failure
patterns (SPEC §7; issue 18's phases 0-2: record, distil, approve, inject, detect).

* the loom (``loom``, ``record``): an append-only log of session turns, tool calls,
  flags and habitat events, one JSON-lines file per day under ``<state_dir>/habitat/``;
* learnings and insights: stored, reinforced, approved by the operator; approved ones
  are vault notes, injected at session start;
* distil and detect: failures and connections found in the record, clustered into a
  pattern registry; the daily digest and ``habitat status``.

Every verb is an operation (``register_operations``), so it is in the CLI (``echo-memory
habitat ...``), over MCP and in the Claude Code plugin. This module stays cheap to
import: the verbs are registered by reference (``operations_index``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from echo_core import hookimpl

if TYPE_CHECKING:
    from echo_core import Operation, OperationRef, Register


@hookimpl
def register_operations(register: Register[Operation[Any] | OperationRef]) -> None:
    """Register the habitat's verbs by reference."""
    from plugins.habitat.operations_index import HABITAT_OPERATIONS

    for ref in HABITAT_OPERATIONS:
        register(ref.name, ref)
