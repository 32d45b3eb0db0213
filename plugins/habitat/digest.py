"""The habitat's daily digest: what the operator should look at today, gathered from the
learnings store, the pattern registry and the day's record.

``compose(ctx, day)`` returns a ``Digest``:

* ``learnings`` — the learnings waiting for approval (``LearningStore.list("pending")``),
  most recurrent first, those learned after ``day`` left out;
* ``suggested`` — suggested insights: pending learnings that recurred
  ``SUGGEST_RECURRENCE`` times or more, and patterns (not dismissed, not fixed) first
  seen by ``day`` that recurred that often or were flagged by the operator;
* ``patterns`` — the patterns seen on ``day`` (an occurrence on that day), and ``counts``
  per status of the whole registry;
* ``batches`` — the batches that got items from ``day``'s failures, and any still open;
* ``connections`` — cross-agent connections (``distil_connections``) among the records
  of ``day`` and the day before, those reaching into ``day``.

States (pending, a pattern's status and counts) are as they are now: the stores keep no
history of them. Reading only; ``digest_note`` writes it as a vault note.
"""

from __future__ import annotations

import datetime as _dt
import sqlite3
from typing import Any

import attrs

from plugins.habitat.distil_connections import Connection
from plugins.habitat.patterns import Pattern
from plugins.habitat.patterns_report import BatchRow

__all__ = ["SUGGEST_RECURRENCE", "Digest", "LearningItem", "Suggestion", "compose",
           "pending_learnings"]

SUGGEST_RECURRENCE = 3


@attrs.frozen(kw_only=True)
class LearningItem:
    """A learning waiting for approval."""

    id: str
    content: str
    type: str
    recurrence: int
    agent_id: str
    created: str


@attrs.frozen(kw_only=True)
class Suggestion:
    """A suggested insight: a ``learning`` or a ``pattern``, why it is suggested."""

    source: str
    id: str
    text: str
    recurrence: int
    flagged: bool
    why: str


@attrs.frozen(kw_only=True)
class Digest:
    """One day's digest (see the module docstring); ``problems``: what could not be read
    (the digest is made without it)."""

    date: str
    learnings: tuple[LearningItem, ...]
    suggested: tuple[Suggestion, ...]
    patterns: tuple[Pattern, ...]
    counts: dict[str, int]
    batches: tuple[BatchRow, ...]
    connections: tuple[Connection, ...]
    problems: tuple[str, ...] = ()


def pending_learnings(ctx: Any, problems: list[str]) -> list[LearningItem]:
    """The learnings pending approval, most recurrent first (none, with a problem said,
    when the learnings store cannot be read)."""
    from echo_core import EchoError
    from plugins.habitat.paths import LEARNINGS_FILE, habitat_dir
    from plugins.habitat.pg_sql import pg_storage

    try:
        from plugins.habitat import learnings
    except ImportError:
        problems.append("learnings not read: the habitat's learnings part is not installed")
        return []
    path = habitat_dir(ctx) / LEARNINGS_FILE
    unreadable: type[Exception] = getattr(learnings, "StoreUnreadable", OSError)
    try:
        storage = pg_storage(ctx)
        if storage is None:
            if not path.exists():
                return []
            store = learnings.LearningStore(path)
        else:  # a PostgreSQL vault: the store is the database's
            from plugins.habitat.learnings_pg import learnings_db

            store = learnings.LearningStore(path, db=learnings_db(storage, path.parent))
        store.decay(ctx.today(), ctx.now())  # as every verb reading learnings does first
        pending = store.list("pending")
    except (OSError, sqlite3.Error, ValueError, EchoError, unreadable) as exc:
        problems.append(f"learnings not read: {exc}")
        return []
    items = [LearningItem(id=str(x.id), content=str(x.content), type=str(x.type),
                          recurrence=int(x.recurrence), agent_id=str(x.agent_id),
                          created=str(x.created)) for x in pending]
    return sorted(items, key=lambda x: (-x.recurrence, x.created, x.id))


def _suggestions(learnings: list[LearningItem], patterns: list[Pattern]) -> list[Suggestion]:
    out = [Suggestion(source="learning", id=x.id, text=x.content, recurrence=x.recurrence,
                      flagged=False, why=f"learned {x.recurrence} times; approve it")
           for x in learnings if x.recurrence >= SUGGEST_RECURRENCE]
    for p in patterns:
        if p.status in ("dismissed", "fixed"):
            continue
        if p.flags or p.recurrence >= SUGGEST_RECURRENCE:
            why = (f"flagged {p.flags} time(s)" if p.flags else f"recurred {p.recurrence} times")
            out.append(Suggestion(source="pattern", id=p.id, text=p.title,
                                  recurrence=p.recurrence, flagged=bool(p.flags), why=why))
    return out


def compose(ctx: Any, day: _dt.date) -> Digest:
    """The digest of ``day`` (see the module docstring)."""
    from plugins.habitat.distil_connections import connections, entity_finder
    from plugins.habitat.patterns import pattern_store
    from plugins.habitat.patterns_lifecycle import STATUSES
    from plugins.habitat.patterns_ops import batch_rows
    from plugins.habitat.record_source import record_source

    problems: list[str] = []
    iso = day.isoformat()
    # a past day's digest leaves out what came after it (learned or first seen later)
    learnings = [x for x in pending_learnings(ctx, problems) if x.created[:10] <= iso]
    store = pattern_store(ctx)
    every = store.list()
    known = [p for p in every if p.first_seen[:10] <= iso]
    today = [o for o in store.occurrences() if iso in (o["first_ts"][:10], o["last_ts"][:10])]
    seen_ids = {o["pattern_id"] for o in today}
    seen = tuple(p for p in every if p.id in seen_ids)
    counts = {s: sum(1 for p in every if p.status == s) for s in STATUSES}
    day_batches = {o["batch_id"] for o in today}
    batches = tuple(b for b in batch_rows(store) if b.id in day_batches or b.items < b.size)
    loom = record_source(ctx)
    wanted = {(day - _dt.timedelta(days=1)).isoformat(), iso}
    records = list(loom.records([d for d in loom.days() if d in wanted]))
    linked = tuple(c for c in connections(records, entity_finder(ctx, problems))
                   if c.last_ts[:10] == iso)
    return Digest(date=iso, learnings=tuple(learnings),
                  suggested=tuple(_suggestions(learnings, known)), patterns=seen,
                  counts=counts, batches=batches, connections=linked,
                  problems=tuple(dict.fromkeys(problems)))
