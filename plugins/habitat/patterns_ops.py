"""The detect verbs' work: list and scan patterns, show or move one, list batches, show
one, flag a turn. Each returns an ``Envelope`` of a ``patterns_report`` result; a bad
argument is a usage error (exit 2), an unknown pattern, batch, session or turn a
not-found (exit 44)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from echo_core import Action, Envelope, not_found, redact, usage_error
from plugins.habitat.loom import RecordReader
from plugins.habitat.patterns import BATCH_SIZE, PatternStore, pattern_store
from plugins.habitat.patterns_lifecycle import STATUSES
from plugins.habitat.patterns_report import (
    BatchesResult,
    BatchResult,
    BatchRow,
    EvidenceRecord,
    FlagResult,
    Occurrence,
    PatternResult,
    PatternsResult,
    Transition,
)
from plugins.habitat.record import Record
from plugins.habitat.record_source import record_source

__all__ = ["batch", "batch_rows", "batches", "flag_turn", "list_patterns", "operator_text",
           "show_pattern"]

_CUT = 300


def _stamp(ctx: Any) -> str:
    return str(ctx.now().isoformat(timespec="seconds"))


def operator_text(text: str) -> str:
    """What the operator typed, as stored: secrets redacted (SPEC §2.1: before any write,
    and before anything normalises it: a lower-cased key no longer looks like one), then
    on one line."""
    return " ".join(redact(text).text.split())


def evidence_records(loom: RecordReader, ids: Iterable[str]) -> dict[str, EvidenceRecord]:
    """The loom's records of ``ids``: only the day files their ids name are read (an id
    starts with its record's ``YYYYMMDD``); an id not found is ``found=False``."""
    wanted = set(ids)
    days = {f"{i[:4]}-{i[4:6]}-{i[6:8]}" for i in wanted if len(i) >= 8 and i[:8].isdigit()}
    out: dict[str, EvidenceRecord] = {}
    for record in loom.records(sorted(d for d in days if d in set(loom.days()))):
        if record.id in wanted:
            out[record.id] = EvidenceRecord(
                id=record.id, kind=record.kind, session_id=record.session_id,
                agent_id=record.agent_id, ts=record.ts, text=record.text[:_CUT],
                result=record.result[:_CUT], is_error=record.is_error)
    for missing in wanted - out.keys():
        out[missing] = EvidenceRecord(id=missing, found=False)
    return out


def _occurrences(ctx: Any, rows: list[dict[str, str]]) -> tuple[Occurrence, ...]:
    ids = [rid for row in rows for rid in row["records"].split()]
    found = evidence_records(record_source(ctx), ids)
    return tuple(Occurrence(key=row["key"], pattern_id=row["pattern_id"], kind=row["kind"],
                            session_id=row["session_id"], agent_id=row["agent_id"],
                            first_ts=row["first_ts"], last_ts=row["last_ts"],
                            summary=row["summary"], severity=row["severity"],
                            batch_id=row["batch_id"],
                            records=tuple(found[r] for r in row["records"].split()))
                 for row in rows)


def list_patterns(ctx: Any, *, scan: bool, days: int, status: str | None,
                  batch_size: int = BATCH_SIZE) -> Envelope[PatternsResult]:
    """The registry's patterns, after a scan of the last ``days`` days when ``scan``."""
    summary = None
    if scan:
        from plugins.habitat.patterns_scan import scan as run_scan

        summary = run_scan(ctx, days=days, batch_size=batch_size)
    every = pattern_store(ctx).list()
    counts = {s: sum(1 for p in every if p.status == s) for s in STATUSES}
    shown = tuple(p for p in every if status is None or p.status == status)
    what = f"{status} pattern(s)" if status else "pattern(s)"
    message = f"{len(shown)} {what} in the registry"
    if summary is not None:
        message += f" (scan: {len(summary.new_patterns)} new, {summary.new_occurrences} " \
                   "new occurrence(s))"
    return Envelope(True, Action.LISTED, message, PatternsResult(scan=summary, counts=counts,
                                                                 patterns=shown))


def _pattern_or_404(store: PatternStore, pid: str) -> Any:
    pattern = store.get(pid)
    if pattern is None:
        raise not_found(f"no pattern {pid!r}; `echo-memory habitat patterns` lists them")
    return pattern


def show_pattern(ctx: Any, pid: str, *, status: str | None = None,
                 note: str = "") -> Envelope[PatternResult]:
    """Pattern ``pid`` (an id or a unique prefix of 4+ characters) with its evidence;
    moved to ``status`` first when given (``patterns_lifecycle.ALLOWED``). ``note``: why;
    moving an actionable pattern to ``proposed_fix`` keeps it as the proposed fix, and
    moving a proposed fix to ``fixed`` / ``actionable`` as the fix's outcome."""
    store = pattern_store(ctx)
    pattern = _pattern_or_404(store, pid)
    moved = False
    if status is not None and status != pattern.status:
        why, stamp = operator_text(note), _stamp(ctx)
        try:
            if status == "proposed_fix" and pattern.status in ("actionable",):
                pattern = store.propose_fix(pattern.id, why, now=stamp, by="operator")
            elif pattern.status == "proposed_fix" and status in ("fixed", "actionable"):
                pattern = store.fix_outcome(pattern.id, worked=status == "fixed", outcome=why,
                                            now=stamp, by="operator")
            else:
                pattern = store.move(pattern.id, status, now=stamp, by="operator", note=why)
        except ValueError as exc:
            raise usage_error(str(exc)) from None
        moved = True
    occurrences = _occurrences(ctx, store.occurrences(pattern=pattern.id))
    transitions = tuple(Transition(from_status=a, to_status=b, at=c, by=d, note=e)
                        for a, b, c, d, e in store.transitions(pattern.id))
    message = (f"pattern {pattern.id} is now {pattern.status}" if moved
               else f"pattern {pattern.id}: {pattern.status}, {pattern.recurrence} occurrence(s)")
    return Envelope(True, Action.UPDATED if moved else Action.READ, message,
                    PatternResult(pattern=pattern, occurrences=occurrences,
                                  transitions=transitions, moved=moved))


def batch_rows(store: PatternStore) -> list[BatchRow]:
    """Every batch with its item count and the kinds among its items."""
    kinds: dict[str, dict[str, int]] = {}
    for row in store.occurrences():
        per = kinds.setdefault(row["batch_id"], {})
        per[row["kind"]] = per.get(row["kind"], 0) + 1
    return [BatchRow(id=b, created=c, size=s, items=n, kinds=kinds.get(b, {}))
            for b, c, s, n in store.batches()]


def batches(ctx: Any) -> Envelope[BatchesResult]:
    """Every batch of failures, oldest first."""
    rows = batch_rows(pattern_store(ctx))
    open_ = sum(1 for b in rows if b.items < b.size)
    return Envelope(True, Action.LISTED, f"{len(rows)} batch(es), {open_} still open",
                    BatchesResult(batches=tuple(rows)))


def batch(ctx: Any, batch_id: str) -> Envelope[BatchResult]:
    """Batch ``batch_id``'s items, each with its evidence records."""
    store = pattern_store(ctx)
    row = next((b for b in batch_rows(store) if b.id == batch_id.strip()), None)
    if row is None:
        raise not_found(f"no batch {batch_id!r}; `echo-memory habitat batches` lists them")
    items = _occurrences(ctx, store.occurrences(batch_id=row.id))
    return Envelope(True, Action.READ, f"batch {row.id}: {row.items} of {row.size} item(s)",
                    BatchResult(batch=row, items=items))


def _same_flag(records: list[Record], target: Record, note: str) -> Record | None:
    return next((r for r in records if r.kind == "flag" and r.refs[:1] == (target.id,)
                 and r.text == note), None)


def flag_turn(ctx: Any, session: str, turn: str, note: str = "", *,
              batch_size: int = BATCH_SIZE) -> Envelope[FlagResult]:
    """Flag a turn (``patterns_flag``): a flag record in the loom, evidence on a
    pattern."""
    from plugins.habitat.patterns_flag import (
        FLAG_AGENT,
        resolve_turn,
        route_flag,
        session_records,
        turn_span,
    )

    loom = record_source(ctx)
    try:
        sid, records = session_records(loom, session.strip())
        target = resolve_turn(records, turn)
    except LookupError as exc:
        raise not_found(str(exc)) from None
    if target.kind == "flag":
        raise usage_error(f"{target.id} is a flag; flag the turn it is about")
    note = operator_text(note)
    flag = _same_flag(records, target, note)
    appended = flag is None
    if flag is None:
        flag = Record.new(ts=ctx.now(), kind="flag", agent_id=FLAG_AGENT, session_id=sid,
                          text=note, parent_id=target.id, refs=(target.id,))
        from plugins.habitat.record_writes import append_records

        append_records(ctx, [flag])
        records.append(flag)
    store = pattern_store(ctx)
    before = {p.id for p in store.list()}
    result, pid = route_flag(store, flag, target, turn_span(records, target),
                             now=_stamp(ctx), batch_size=batch_size)
    pattern = store.get(pid)
    evidence = pattern.evidence if pattern is not None else ()
    target_view = evidence_records(loom, [target.id])[target.id]
    data = FlagResult(session_id=sid, turn=turn.strip(), target=target_view,
                      flag_id=flag.id if appended else None, pattern_id=pid,
                      new_pattern=pid not in before, evidence=evidence)
    if not appended and not result.new_evidence:
        return Envelope(True, Action.UNCHANGED,
                        f"{target.id} is already flagged with this note (pattern {pid})", data)
    where = "a new pattern" if data.new_pattern else "pattern"
    return Envelope(True, Action.WRITTEN,
                    f"flagged {target.kind} {target.id} of session {sid}: {where} {pid}, "
                    f"{result.new_evidence} evidence added", data)
