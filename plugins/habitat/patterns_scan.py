"""A scan: the record's recent days distilled into the pattern registry.

``scan(ctx, days=..., batch_size=...)`` reads the loom's day files of the last ``days``
days (today included, ``ctx.today()``), distils their failures (``distil_failures``),
registers them (``PatternStore.register``: idempotent, so scanning the same records
twice adds nothing) and routes the ``flag`` records not routed yet
(``patterns_flag.route_flag``). Nothing is written to the loom.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

import attrs

from plugins.habitat.patterns import BATCH_SIZE, PatternStore, RegisterResult, pattern_store
from plugins.habitat.record import Record

__all__ = ["DEFAULT_DAYS", "ScanSummary", "now_seconds", "scan", "window_days"]

#: The record's hot window (SPEC §7): what a scan reads by default.
DEFAULT_DAYS = 7


@attrs.frozen(kw_only=True)
class ScanSummary:
    """What a scan read and changed: the days and records read, the failures found per
    kind, then ``RegisterResult``'s counts (flags included)."""

    days: tuple[str, ...]
    records: int
    found: dict[str, int]
    new_patterns: tuple[str, ...]
    new_occurrences: int
    new_evidence: int
    moves: tuple[str, ...]
    batches: tuple[str, ...]


def window_days(today: _dt.date, days: int) -> list[str]:
    """The ``days`` dates ending today, oldest first (``YYYY-MM-DD``)."""
    return [(today - _dt.timedelta(days=n)).isoformat() for n in range(days - 1, -1, -1)]


def now_seconds(ctx: Any) -> float:
    """``ctx.now()`` in ``distil_model.record_time``'s seconds."""
    now: _dt.datetime = ctx.now()
    return (now - _dt.datetime(1970, 1, 1)).total_seconds()


def _merge(a: RegisterResult, b: RegisterResult) -> RegisterResult:
    return RegisterResult(new_patterns=a.new_patterns + b.new_patterns,
                          new_occurrences=a.new_occurrences + b.new_occurrences,
                          new_evidence=a.new_evidence + b.new_evidence,
                          touched=tuple(dict.fromkeys(a.touched + b.touched)),
                          moves=a.moves + b.moves,
                          batches=tuple(dict.fromkeys(a.batches + b.batches)))


def _route_flags(store: PatternStore, records: list[Record], *, now: str,
                 batch_size: int) -> tuple[RegisterResult, int]:
    from plugins.habitat.distil_failures import by_session
    from plugins.habitat.patterns_flag import route_flag, turn_span

    total, flags = RegisterResult(), 0
    for session in by_session(records).values():
        ids = {r.id: r for r in session}
        for flag in (r for r in session if r.kind == "flag" and r.refs):
            flags += 1
            if store.has_occurrence(f"flagged|{flag.id}"):
                continue
            target = ids.get(flag.refs[0])
            if target is None:  # flagged record outside the window: a stand-in for it
                target = Record(id=flag.refs[0], ts=flag.ts, kind="prompt",
                                agent_id=flag.agent_id, session_id=flag.session_id)
                span: list[Record] = []
            else:
                span = turn_span(session, target)
            result, _ = route_flag(store, flag, target, span, now=now, batch_size=batch_size)
            total = _merge(total, result)
    return total, flags


def scan(ctx: Any, *, days: int = DEFAULT_DAYS, batch_size: int = BATCH_SIZE,
         end: _dt.date | None = None) -> ScanSummary:
    """Distil the last ``days`` days of the record into the registry (module docstring);
    ``end``: the window's last day (default today)."""
    from plugins.habitat.distil_failures import distil
    from plugins.habitat.record_source import record_source

    loom = record_source(ctx)
    wanted = set(window_days(end or ctx.today(), days))
    read = [d for d in loom.days() if d in wanted]
    records = list(loom.records(read))
    failures = distil(records, now=now_seconds(ctx))
    store = pattern_store(ctx)
    stamp = ctx.now().isoformat(timespec="seconds")
    result = store.register(failures, now=stamp, batch_size=batch_size)
    flagged, flags = _route_flags(store, records, now=stamp, batch_size=batch_size)
    result = _merge(result, flagged)
    found: dict[str, int] = {}
    for failure in failures:
        found[failure.kind] = found.get(failure.kind, 0) + 1
    if flags:
        found["flagged"] = flags
    return ScanSummary(days=tuple(read), records=len(records), found=found,
                       new_patterns=result.new_patterns, new_occurrences=result.new_occurrences,
                       new_evidence=result.new_evidence, moves=result.moves,
                       batches=result.batches)
