"""``search_hits`` over a PostgreSQL vault's shared record (``loom_pg``).

The same contract as the loom index's search (``loom_search``): records holding every
query word first, then — when fewer than ``limit`` do — records holding any of them;
filters by agent, kind and time window. Each word is ``plainto_tsquery('english', w)``
(so a query's own operators are never interpreted, and words are stemmed as the
``tsv`` column is: "deploying" finds "deploy"), AND-ed (``&&``) for the first pass and
OR-ed (``||``) for the second; ranked by ``ts_rank`` over the weighted ``tsv`` (tags
A, text B, result D), ties to the newest row.
"""

from __future__ import annotations

from typing import Any

from plugins.habitat.loom_pg import record_of
from plugins.habitat.pg_sql import to_pg
from plugins.habitat.record import Record

__all__ = ["pg_search_hits"]


def _pass(conn: Any, words: list[str], joiner: str, limit: int,
          filters: list[tuple[str, str]], skip: list[int]) -> list[tuple[int, Any, float]]:
    query = f" {joiner} ".join(["plainto_tsquery('english'::regconfig, ?)"] * len(words))
    sql = (f"SELECT r.seq, r.data, ts_rank(r.tsv, q.q) AS score FROM records r CROSS JOIN "
           f"(SELECT {query} AS q) q WHERE r.tsv @@ q.q")
    args: list[Any] = list(words)
    for clause, value in filters:
        sql += f" AND {clause}"
        args.append(value)
    if skip:
        sql += " AND NOT (r.seq = ANY(?))"
        args.append(skip)
    sql += " ORDER BY score DESC, r.seq DESC LIMIT ?"
    args.append(limit)
    return [(int(seq), data, float(score)) for seq, data, score
            in conn.execute(sql, args).fetchall()]


def pg_search_hits(shared: Any, words: list[str], limit: int, *, agent_id: str | None,
                   kind: str | None, low: str | None,
                   high: str | None) -> list[tuple[Record, float]]:
    """The records of ``shared`` (``loom_pg.PgRecords``) matching ``words`` and the
    filters, best first, at most ``limit``, with their scores (module docstring)."""
    if not words or limit < 1:
        return []
    shared.ship()
    filters = [(clause, to_pg(value)) for clause, value in (
        ("r.agent_id = ?", agent_id), ("r.kind = ?", kind), ("r.ts >= ?", low),
        ("r.ts < ?", high)) if value]
    found: list[tuple[int, Any, float]] = []
    with shared.db.reading() as conn:
        for joiner in ("&&", "||"):
            if len(found) >= limit or (joiner == "||" and len(words) == 1):
                break
            found += _pass(conn, words, joiner, limit - len(found), filters,
                           [seq for seq, _, _ in found])
    return [(record_of(data), score) for _, data, score in found]
