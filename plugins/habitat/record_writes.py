"""Writing records from echo-memory itself (CLI, MCP): who, when, redaction, durability.

What ``habitat record``, ``fork`` and ``fold`` share: the record's time
(``record_time``), the agent it is from (``agent_of``), the redaction every text and
name (agent, session, parent, refs, tags) goes through (``redacted``: capture's rules,
``echo_core.redact``, SPEC §2.1: before any write) and the durable append
through the process's group committer (``append_records``: one write and one fsync
shared by concurrent callers; returns once the records are on disk — on a PostgreSQL
vault, one transaction per group, committed: ``record_source.committer``).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from typing import Any

from plugins.habitat.record import Record

__all__ = ["AGENT_ENV", "DEFAULT_AGENT", "agent_of", "append_records", "record_time",
           "redacted"]

#: Where the agent id of a record comes from when the caller names none.
AGENT_ENV = "ECHO_AGENT_ID"
#: ... and the id when that is unset too.
DEFAULT_AGENT = "unknown-agent"


def record_time(ctx: Any) -> _dt.datetime:
    """Now, to the microsecond (records sort by it); ``ECHO_NOW`` / ``ECHO_TODAY`` pin it
    as they pin ``ctx.now()``."""
    env = getattr(ctx, "env", {}) or {}
    if env.get("ECHO_NOW") or env.get("ECHO_TODAY"):
        now: _dt.datetime = ctx.now()
        return now
    return _dt.datetime.now()


def agent_of(ctx: Any, given: str) -> str:
    """``given``, else ``$ECHO_AGENT_ID``, else ``DEFAULT_AGENT``; redacted (``redacted``):
    a name the operator typed is stored like any other text."""
    env = getattr(ctx, "env", {}) or {}
    return redacted(given.strip() or str(env.get(AGENT_ENV, "")).strip()) or DEFAULT_AGENT


def redacted(text: str) -> str:
    """``text`` with ``<private>`` blocks dropped and secrets replaced (capture's rules)."""
    if not text:
        return text
    from echo_core import redact

    return redact(text).text


def append_records(ctx: Any, records: Sequence[Record]) -> bool:
    """Append ``records`` to ``ctx``'s record durably, in order (group commit); True
    when a PostgreSQL vault was unreachable and they wait in this machine's spool
    (``loom_pg``), shipped by the next habitat call that reaches it."""
    from plugins.habitat.record_source import committer

    return committer(ctx).append(records)
