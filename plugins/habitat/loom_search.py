"""Search over the record: ``search_records`` (the shared interface of issue 18).

``search_records(ctx, query, limit, *, agent_id=None, kind=None, since=None,
until=None)`` returns the records whose text, result or tags hold the query's words,
best first, from the loom's index (``loom_index``; caught up with the day files first,
so a record appended a moment ago is found). Records holding every word come first; when
fewer than ``limit`` do, records holding any of them fill the rest. Ranking: FTS5's BM25
(tags count double, results half), then the newest first, among the newest matches
(``loom_rank``: what keeps a search of a million records within milliseconds).

Filters: ``agent_id`` and ``kind`` exact; ``since`` / ``until`` an ISO date or time
(``until`` a date includes that whole day) or a span back from now (``30m``, ``24h``,
``7d``): ``time_window``. A query with no word in it finds nothing.

The index connection is kept per thread and folder (``index_for``). On a PostgreSQL
vault the search runs in the database over the shared record (``loom_pg_search``).
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from plugins.habitat.loom_index import Located
from plugins.habitat.loom_open import index_for
from plugins.habitat.loom_rank import RankedSearch
from plugins.habitat.record import Record

__all__ = ["index_for", "search_hits", "search_records", "time_window"]

_WORD = re.compile(r"\w+", re.UNICODE)
_SPAN = re.compile(r"^(\d{1,6})\s*([mhdw])$")
_SPAN_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 604800}
#: Most query words used (the rest are ignored).
MAX_WORDS = 32


def time_window(since: str | None, until: str | None,
                now: _dt.datetime) -> tuple[str | None, str | None]:
    """``(lowest ts, ts upper bound exclusive)`` as record ``ts`` strings compare; raises
    ``ValueError`` naming the bad value."""
    low = _bound(since, now, end=False) if since else None
    high = _bound(until, now, end=True) if until else None
    return low, high


def _bound(value: str, now: _dt.datetime, *, end: bool) -> str:
    text = value.strip()
    span = _SPAN.match(text.lower())
    if span:
        moment = now - _dt.timedelta(seconds=int(span.group(1)) * _SPAN_UNITS[span.group(2)])
        return moment.isoformat(timespec="microseconds")
    try:
        if len(text) == 10:
            day = _dt.date.fromisoformat(text)
            if end:
                day += _dt.timedelta(days=1)
            return f"{day.isoformat()}T00:00:00.000000"
        moment = _dt.datetime.fromisoformat(text).replace(tzinfo=None)
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO date or time (2026-03-01, "
                         "2026-03-01T09:30) nor a span (30m, 24h, 7d)") from None
    if end:
        moment += _dt.timedelta(microseconds=1)
    return moment.isoformat(timespec="microseconds")


def fts_words(query: str) -> list[str]:
    """The query's words, each quoted for FTS5 (no operator of the query survives)."""
    words = []
    for word in _WORD.findall(query.lower()):
        if word not in words:
            words.append(word)
    return [f'"{w}"' for w in words[:MAX_WORDS]]


def search_hits(ctx: Any, query: str, limit: int, *, agent_id: str | None = None,
                kind: str | None = None, since: str | None = None,
                until: str | None = None, exact: bool = False) -> list[tuple[Record, float]]:
    """``search_records`` with each record's score (higher is better). ``exact``: the
    bounds are already ``time_window``'s (``ts >= since``, ``ts < until``)."""
    words = fts_words(query)
    if not words or limit < 1:
        return []
    low, high = (since, until) if exact else time_window(since, until, ctx.now())
    from plugins.habitat.record_source import pg_records

    shared = pg_records(ctx)
    if shared is not None:
        from plugins.habitat.loom_pg_search import pg_search_hits

        return pg_search_hits(shared, [w.strip('"') for w in words], limit,
                              agent_id=agent_id, kind=kind, low=low, high=high)
    index = index_for(ctx)
    index.catch_up()
    search = RankedSearch(index, limit, agent_id, kind, low, high)
    found: list[tuple[Located, float]] = []
    seen: set[int] = set()
    for joiner in (" AND ", " OR "):
        if len(found) >= limit or (joiner == " OR " and len(words) == 1):
            break
        for located, score in search.ranked(words, joiner):
            if located.rowid not in seen and len(found) < limit:
                seen.add(located.rowid)
                found.append((located, score))
    records = index.read_many([where for where, _ in found])
    return [(record, score) for record, (_, score) in zip(records, found, strict=True)
            if record is not None]


def search_records(ctx: Any, query: str, limit: int, *, agent_id: str | None = None,
                   kind: str | None = None, since: str | None = None,
                   until: str | None = None) -> list[Record]:
    """The records matching ``query`` and the filters, best first (module docstring).
    Raises ``ValueError`` for a ``since`` / ``until`` that is no time."""
    return [record for record, _ in search_hits(ctx, query, limit, agent_id=agent_id,
                                                kind=kind, since=since, until=until)]
