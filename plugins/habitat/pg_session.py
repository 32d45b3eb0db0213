"""The session start of a PostgreSQL vault: ship the spool, then the insights.

``pg_session_context`` is ``insight_context.session_context`` for a vault whose
habitat lives in the database. First this machine's spool (the hook recorder's records)
is shipped to the shared record (``loom_spool``), so a session start is also when the
hooks' records join it. The database unreachable: no insight block (the session starts
without one, as when no insight matches), and the spool waits for the next call.
"""

from __future__ import annotations

from typing import Any

__all__ = ["pg_session_context"]


def pg_session_context(ctx: Any, **situation: Any) -> list[str] | None:
    """The insight block for the session starting, or None (module docstring)."""
    from echo_core import BackendUnavailable
    from plugins.habitat.insight_context import session_context
    from plugins.habitat.record_source import pg_records

    try:
        shared = pg_records(ctx)
        if shared is not None:
            shared.ship()
        return session_context(ctx, **situation)
    except BackendUnavailable:
        return None
