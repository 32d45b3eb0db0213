"""The registry's row-level writes, each inside the caller's ``BEGIN IMMEDIATE``
transaction (``patterns.PatternStore``; SQL that SQLite and PostgreSQL both run, ``pg_sql``): find the occurrence a failure already is, add
evidence, create a pattern, widen its first / last seen, open a batch, move a status and
settle severity and status after new evidence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from plugins.habitat.distil_model import Failure
from plugins.habitat.patterns_lifecycle import auto_status, pattern_severity

if TYPE_CHECKING:
    from plugins.habitat.pg_sql import SqlConn

__all__ = ["add_evidence", "create_pattern", "known_occurrence", "open_batch", "set_status",
           "settle", "widen"]

#: The columns of ``patterns``, in table order.
PATTERN_COLUMNS = ("id, signature, kind, title, severity, status, first_seen, last_seen, "
                   "recurrence, flags, fix, fix_outcome, updated")


def known_occurrence(db: SqlConn, failure: Failure) -> tuple[str, str] | None:
    """``(key, pattern id)`` of the occurrence ``failure`` is: the same key, or a known
    occurrence of the same kind holding one of its records."""
    row = db.execute("SELECT key, pattern_id FROM occurrences WHERE key = ?",
                     (failure.key,)).fetchone()
    if row is None and failure.kind != "flagged" and failure.record_ids:
        marks = ",".join("?" * len(failure.record_ids))
        row = db.execute(
            "SELECT o.key, o.pattern_id FROM evidence e JOIN occurrences o ON "
            f"o.key = e.occurrence WHERE e.record_id IN ({marks}) AND o.kind = ? "
            "ORDER BY o.key LIMIT 1", (*failure.record_ids, failure.kind)).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def add_evidence(db: SqlConn, pid: str, key: str, record_ids: Sequence[str],
                  role_of: dict[str, str]) -> int:
    added = 0
    for rid in dict.fromkeys(record_ids):
        cur = db.execute("INSERT INTO evidence VALUES (?,?,?,?) ON CONFLICT DO NOTHING",
                         (pid, rid, key, role_of.get(rid, "evidence")))
        added += cur.rowcount
    return added


def create_pattern(db: SqlConn, pid: str, failure: Failure, now: str) -> bool:
    cur = db.execute(
        f"INSERT INTO patterns ({PATTERN_COLUMNS}) VALUES "
        "(?,?,?,?,?,?,?,?,0,0,'','',?) ON CONFLICT DO NOTHING",
        (pid, failure.signature, failure.kind, failure.title, failure.severity,
         "monitoring", failure.first_ts, failure.last_ts, now))
    if cur.rowcount:
        db.execute("INSERT INTO transitions VALUES (?,?,?,?,?,?)",
                   (pid, "", "monitoring", now, "habitat", f"found: {failure.summary}"))
    return bool(cur.rowcount)


def widen(db: SqlConn, pid: str, failure: Failure, now: str) -> None:
    db.execute("UPDATE patterns SET first_seen = CASE WHEN first_seen <= ? THEN first_seen "
               "ELSE ? END, last_seen = CASE WHEN last_seen >= ? THEN last_seen ELSE ? END, "
               "updated = ? WHERE id = ?",
               (failure.first_ts, failure.first_ts, failure.last_ts, failure.last_ts, now,
                pid))


def open_batch(db: SqlConn, size: int, now: str) -> str:
    """The newest batch while it has room, else a new one (``b0001``, ``b0002``, ...)."""
    row = db.execute("SELECT b.id, b.size, (SELECT count(*) FROM occurrences o WHERE "
                     "o.batch_id = b.id) FROM batches b ORDER BY b.id DESC LIMIT 1").fetchone()
    if row is not None and int(row[2]) < int(row[1]):
        return str(row[0])
    number = int(str(row[0])[1:]) + 1 if row is not None else 1
    batch = f"b{number:04d}"
    db.execute("INSERT INTO batches VALUES (?,?,?)", (batch, now, size))
    return batch


def set_status(db: SqlConn, pid: str, current: str, to: str, now: str, by: str,
                note: str) -> None:
    db.execute("UPDATE patterns SET status = ?, updated = ? WHERE id = ?", (to, now, pid))
    db.execute("INSERT INTO transitions VALUES (?,?,?,?,?,?)", (pid, current, to, now, by, note))


def settle(db: SqlConn, pid: str, failure: Failure, now: str) -> str:
    """Recompute severity; make the automatic status move (``auto_status``), if any."""
    status, recurrence, flags = db.execute(
        "SELECT status, recurrence, flags FROM patterns WHERE id = ?", (pid,)).fetchone()
    worst = next((s for s in ("high", "medium") if db.execute(
        "SELECT 1 FROM occurrences WHERE pattern_id = ? AND severity = ? LIMIT 1",
        (pid, s)).fetchone()), "low")
    severity = pattern_severity([worst], int(recurrence))
    db.execute("UPDATE patterns SET severity = ? WHERE id = ?", (severity, pid))
    after_fix = False
    if status == "fixed":
        fixed_at = db.execute("SELECT max(at) FROM transitions WHERE pattern_id = ? AND "
                              "to_status = 'fixed'", (pid,)).fetchone()[0]
        after_fix = fixed_at is None or failure.last_ts > str(fixed_at)
    move = auto_status(str(status), recurrence=int(recurrence), severity=severity,
                       flags=int(flags), recurred_after_fix=after_fix)
    if move is None:
        return ""
    to, why = move
    set_status(db, pid, str(status), to, now, "habitat", why)
    return f"{pid}: {status} -> {to} ({why})"
