"""``learning_hits``: the learnings a query finds, for ``ask_habitat`` (the record part
merges them with the record's hits).

FTS5 over each learning's content and tags (``learning_fts``, porter stemming, unicode
words), every query word optional (``OR``), ranked by FTS5's BM25; ``score`` is that
rank negated (higher is better, > 0; small for a small store, where every word is
common). Every state is searched
(``state`` says which each is); nothing is filtered by decay. Filters: ``agent_id``
(learnings that agent stored or reinforced: any provenance row of theirs) and ``since``
(learnings ``updated`` at or after that ISO date or time). Reads only: no decay, no sync.
On a PostgreSQL vault: ``learnings_pg.pg_learning_hits`` (the same words, ``ts_rank``).
"""

from __future__ import annotations

import re
from typing import Any

from plugins.habitat.learning_hit_rows import HIT_COLUMNS, hit_of, with_filters
from plugins.habitat.learnings_schema import connect

__all__ = ["MAX_QUERY_WORDS", "learning_hits"]

#: Most query words searched (the first ones).
MAX_QUERY_WORDS = 32
_WORD_RE = re.compile(r"\w+", re.UNICODE)


def _match_expression(query: str) -> str:
    """``query``'s words as an FTS5 expression: each a quoted string, joined by OR (no
    operator or column filter of the query's own is ever interpreted)."""
    words = list(dict.fromkeys(w.casefold() for w in _WORD_RE.findall(query)))
    return " OR ".join(f'"{w}"' for w in words[:MAX_QUERY_WORDS])


def learning_hits(ctx: Any, query: str, limit: int, *, agent_id: str | None = None,
                  since: str | None = None) -> list[dict[str, Any]]:
    """The learnings matching ``query``, best first, at most ``limit`` (module docstring):
    JSON-able dicts with id, content, type, tags, state, recurrence, agent_id,
    session_id, created, updated, reason, insight_path and score. An empty query, a
    ``limit`` under 1 or no store yet: []."""
    from plugins.habitat.learnings_ops import open_store

    expression = _match_expression(query)
    store = open_store(ctx)
    if not expression or limit < 1 or not store.exists():
        return []
    if store.db is not None:
        from plugins.habitat.learnings_pg import pg_learning_hits

        words = list(dict.fromkeys(w.casefold() for w in _WORD_RE.findall(query)))
        return pg_learning_hits(store.db, words[:MAX_QUERY_WORDS], limit,
                                agent_id=agent_id, since=since)
    path = store.path
    sql = (f"SELECT {HIT_COLUMNS}, bm25(learning_fts) AS rank FROM learning_fts "
           "JOIN learnings l ON l.id = learning_fts.id WHERE learning_fts MATCH ?")
    args: list[Any] = [expression]
    sql = with_filters(sql, args, agent_id=agent_id, since=since)
    sql += " ORDER BY rank, l.id LIMIT ?"
    args.append(limit)
    conn = connect(path)
    try:
        rows = conn.execute(sql, args).fetchall()
    finally:
        conn.close()
    return [hit_of(r, -float(r[12])) for r in rows]
