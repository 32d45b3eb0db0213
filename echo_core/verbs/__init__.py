"""The core's own verbs, each declared once as an ``Operation`` (``echo_core.operations``)
and registered through ``register_operations`` by the core's default plugin, like any
third party's. Declarations import their operation's implementation only when it runs,
so listing them stays cheap."""

from __future__ import annotations

from typing import Any

from echo_core.operations import Operation


def builtin_operations() -> tuple[Operation[Any], ...]:
    """Every built-in operation, in the order the CLI lists them."""
    from echo_core.verbs import (
        capture_verbs,
        entity_verbs,
        history_verbs,
        note_verbs,
        recall_verbs,
        scope_verbs,
        session_verbs,
        triage_verbs,
        vault_verbs,
    )

    return (
        vault_verbs.INIT, vault_verbs.DOCTOR, capture_verbs.CAPTURE, entity_verbs.RESOLVE,
        entity_verbs.LINK, recall_verbs.RECALL, recall_verbs.REINDEX, scope_verbs.SCOPE_SHOW,
        scope_verbs.SCOPE_SET, session_verbs.LOAD, session_verbs.SESSION_END, note_verbs.GET,
        note_verbs.PUT, note_verbs.APPEND, note_verbs.FM, note_verbs.LS, history_verbs.HISTORY,
        history_verbs.RESTORE, history_verbs.BACKUP, triage_verbs.TRIAGE_LIST,
        triage_verbs.TRIAGE, vault_verbs.FLUSH,
    )
