"""What a learnings search selects and how a row becomes a hit, shared by the SQLite
search (``learning_search``, FTS5) and the PostgreSQL one (``learnings_pg``, tsvector):
only the text-search clause and the rank column differ between them."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["HIT_COLUMNS", "hit_of", "with_filters"]

#: The learning's columns of a hit, in ``hit_of``'s order (the rank column follows).
HIT_COLUMNS = ("l.id, l.content, l.type, l.tags, l.state, l.recurrence, l.agent_id, "
               "l.session_id, l.created, l.updated, l.reason, l.insight_path")


def with_filters(sql: str, args: list[Any], *, agent_id: str | None,
                 since: str | None) -> str:
    """``sql`` narrowed to learnings ``agent_id`` stored or reinforced and to those
    updated at or after ``since`` (each when given); their values appended to ``args``."""
    if agent_id is not None:
        sql += " AND l.id IN (SELECT learning_id FROM provenance WHERE agent_id = ?)"
        args.append(agent_id)
    if since is not None:
        sql += " AND l.updated >= ?"
        args.append(since)
    return sql


def hit_of(row: Any, score: float) -> dict[str, Any]:
    """The JSON-able hit of a row selected as ``HIT_COLUMNS``, scored ``score``."""
    return {"id": row[0], "content": row[1], "type": row[2], "tags": json.loads(row[3]),
            "state": row[4], "recurrence": row[5], "agent_id": row[6], "session_id": row[7],
            "created": row[8], "updated": row[9], "reason": row[10],
            "insight_path": row[11], "score": score}
