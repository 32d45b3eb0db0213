"""The pattern registry: failures found in the record, clustered by signature, in SQLite
at ``<habitat_dir>/patterns.sqlite`` (``PATTERNS_FILE``).

Tables: ``patterns`` (one per signature: id, signature, kind, title, severity, status,
first / last seen — the record times of its earliest and latest evidence —, recurrence,
flags, the proposed fix and its outcome), ``occurrences`` (one per ``Failure.key``,
each in a batch), ``evidence`` (pattern, record id, occurrence, role: ``evidence`` |
``flagged`` | ``flag``), ``transitions`` (every status move) and ``batches``.

``register`` is idempotent: an occurrence whose key is known, or which shares a record
with a known occurrence of the same kind (a streak found again, longer), adds only the
record ids not yet evidence; a second scan of the same records adds nothing. Every write
is one ``BEGIN IMMEDIATE`` transaction, so concurrent scans serialise and a writer killed
mid-way leaves the registry as it was. A pattern's id is derived from its signature
(``pattern_id``): the same failure found on another day, or by a rebuilt registry, has
the same id. Status moves: ``patterns_lifecycle``; flags: ``patterns_flag``.

On a PostgreSQL vault the registry is the database's (``patterns_pg``: the same tables
and SQL, every write one transaction under the registry's advisory lock), so every
replica registers into, and reads, one registry.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from plugins.habitat.distil_model import Failure
from plugins.habitat.patterns_lifecycle import can_move
from plugins.habitat.patterns_rows import (
    PATTERN_COLUMNS,
    add_evidence,
    create_pattern,
    known_occurrence,
    open_batch,
    set_status,
    settle,
    widen,
)

if TYPE_CHECKING:
    from plugins.habitat.pg_sql import PgDb, SqlConn

__all__ = ["BATCH_SIZE", "PATTERNS_FILE", "Pattern", "PatternStore", "RegisterResult",
           "pattern_id", "pattern_store"]

PATTERNS_FILE = "patterns.sqlite"
#: Failures per batch (``habitat batches``).
BATCH_SIZE = 8
_SCHEMA = """
CREATE TABLE IF NOT EXISTS patterns (
  id TEXT PRIMARY KEY, signature TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
  title TEXT NOT NULL, severity TEXT NOT NULL, status TEXT NOT NULL,
  first_seen TEXT NOT NULL, last_seen TEXT NOT NULL, recurrence INTEGER NOT NULL,
  flags INTEGER NOT NULL DEFAULT 0, fix TEXT NOT NULL DEFAULT '',
  fix_outcome TEXT NOT NULL DEFAULT '', updated TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS occurrences (
  key TEXT PRIMARY KEY, pattern_id TEXT NOT NULL, kind TEXT NOT NULL,
  session_id TEXT NOT NULL, agent_id TEXT NOT NULL, first_ts TEXT NOT NULL,
  last_ts TEXT NOT NULL, summary TEXT NOT NULL, severity TEXT NOT NULL,
  batch_id TEXT NOT NULL, found TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS occurrences_batch ON occurrences(batch_id);
CREATE INDEX IF NOT EXISTS occurrences_pattern ON occurrences(pattern_id, severity);
CREATE TABLE IF NOT EXISTS evidence (
  pattern_id TEXT NOT NULL, record_id TEXT NOT NULL, occurrence TEXT NOT NULL,
  role TEXT NOT NULL, PRIMARY KEY (pattern_id, record_id));
CREATE INDEX IF NOT EXISTS evidence_record ON evidence(record_id);
CREATE TABLE IF NOT EXISTS transitions (
  pattern_id TEXT NOT NULL, from_status TEXT NOT NULL, to_status TEXT NOT NULL,
  at TEXT NOT NULL, by TEXT NOT NULL, note TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS batches (
  id TEXT PRIMARY KEY, created TEXT NOT NULL, size INTEGER NOT NULL);
"""
#: Row shapes (module-level names: inside the class, ``list`` is the method).
Occurrences = list[dict[str, str]]
Batches = list[tuple[str, str, int, int]]
Transitions = list[tuple[str, str, str, str, str]]


def pattern_store(ctx: Any) -> PatternStore:
    """The registry of ``ctx``'s habitat (``<habitat_dir>/patterns.sqlite``; for a
    PostgreSQL vault, its tables there: ``patterns_pg``)."""
    from plugins.habitat.paths import habitat_dir
    from plugins.habitat.pg_sql import pg_storage

    path = habitat_dir(ctx) / PATTERNS_FILE
    storage = pg_storage(ctx)
    if storage is None:
        return PatternStore(path)
    from plugins.habitat.patterns_pg import patterns_db

    return PatternStore(path, db=patterns_db(storage))


def pattern_id(signature: str) -> str:
    """The id of the pattern of ``signature`` (``p-`` and 10 hex digits of its hash)."""
    return "p-" + hashlib.sha256(signature.encode("utf-8")).hexdigest()[:10]


@attrs.frozen(kw_only=True)
class Pattern:
    """One registered pattern (see the module docstring); ``evidence``: its record ids,
    oldest first."""

    id: str
    signature: str
    kind: str
    title: str
    severity: str
    status: str
    first_seen: str
    last_seen: str
    recurrence: int
    flags: int
    fix: str
    fix_outcome: str
    updated: str
    evidence: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class RegisterResult:
    """What one ``register`` call changed: patterns created, occurrences and evidence
    rows added, the patterns touched, the automatic status moves
    (``"<id>: <from> -> <to> (<why>)"``) and the batches that got items."""

    new_patterns: tuple[str, ...] = ()
    new_occurrences: int = 0
    new_evidence: int = 0
    touched: tuple[str, ...] = ()
    moves: tuple[str, ...] = ()
    batches: tuple[str, ...] = ()


class PatternStore:
    """The registry at ``path`` (created, with its folder, on first write), or, given
    ``db``, in a PostgreSQL vault's tables."""

    def __init__(self, path: Path, *, db: PgDb | None = None) -> None:
        self.path = path
        self.db = db

    # -- connection -------------------------------------------------------------------

    @contextlib.contextmanager
    def _db(self, *, write: bool) -> Iterator[SqlConn]:
        if self.db is not None:
            with self.db.transaction() if write else self.db.reading() as pg:
                yield pg
            return
        if not write and not self.path.exists():
            db = sqlite3.connect(":memory:")
            db.executescript(_SCHEMA)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            db.execute("PRAGMA busy_timeout = 30000")
            if write:
                db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = FULL")
        try:
            if write:
                db.execute("BEGIN IMMEDIATE")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                try:
                    yield db
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            else:
                yield db
        finally:
            db.close()

    # -- reads --------------------------------------------------------------------------

    def list(self, status: str | None = None) -> list[Pattern]:
        """Every pattern (of ``status`` when given), latest seen first, with evidence."""
        with self._db(write=False) as db:
            if not _has_tables(db):
                return []
            where, args = ("WHERE status = ?", (status,)) if status else ("", ())
            rows = db.execute(f"SELECT {PATTERN_COLUMNS} FROM patterns {where} "
                              "ORDER BY last_seen DESC, id", args).fetchall()
            evidence: dict[str, list[str]] = {}
            for pid, rid in db.execute("SELECT pattern_id, record_id FROM evidence "
                                       "ORDER BY record_id"):
                evidence.setdefault(pid, []).append(rid)
        return [_pattern(row, evidence.get(row[0], [])) for row in rows]

    def get(self, pid: str) -> Pattern | None:
        """The pattern ``pid`` (or the one pattern whose id starts with it), or None."""
        every = self.list()
        found = [p for p in every if p.id == pid]
        if not found and len(pid) >= 4:
            found = [p for p in every if p.id.startswith(pid)]
        return found[0] if len(found) == 1 else None

    def occurrences(self, *, batch_id: str | None = None,
                    pattern: str | None = None) -> Occurrences:
        """Occurrences (of a batch or a pattern), oldest first: key, pattern_id, kind,
        session_id, agent_id, first_ts, last_ts, summary, severity, batch_id and
        ``records`` (its evidence ids, space-separated)."""
        with self._db(write=False) as db:
            if not _has_tables(db):
                return []
            clause, args = "", tuple[str, ...]()
            if batch_id is not None:
                clause, args = "WHERE o.batch_id = ?", (batch_id,)
            elif pattern is not None:
                clause, args = "WHERE o.pattern_id = ?", (pattern,)
            rows = db.execute(
                "SELECT o.key, o.pattern_id, o.kind, o.session_id, o.agent_id, o.first_ts, "
                "o.last_ts, o.summary, o.severity, o.batch_id, (SELECT group_concat("
                "record_id, ' ') FROM (SELECT record_id FROM evidence e WHERE e.occurrence"
                f" = o.key ORDER BY record_id) AS ev) FROM occurrences o {clause} "
                "ORDER BY o.first_ts, o.key", args).fetchall()
        names = ("key", "pattern_id", "kind", "session_id", "agent_id", "first_ts",
                 "last_ts", "summary", "severity", "batch_id", "records")
        return [dict(zip(names, (v or "" for v in row), strict=True)) for row in rows]

    def pattern_holding(self, record_id: str, span: Sequence[str]) -> str | None:
        """The signature of the pattern holding ``record_id`` as evidence, else of the
        one holding the most of ``span`` (ties: the oldest), else None."""
        with self._db(write=False) as db:
            if not _has_tables(db):
                return None
            row = db.execute("SELECT p.signature FROM evidence e JOIN patterns p ON p.id = "
                             "e.pattern_id WHERE e.record_id = ? ORDER BY p.first_seen, p.id "
                             "LIMIT 1", (record_id,)).fetchone()
            if row is None and span:
                marks = ",".join("?" * len(span))
                row = db.execute(
                    "SELECT p.signature FROM evidence e JOIN patterns p ON p.id = "
                    f"e.pattern_id WHERE e.record_id IN ({marks}) GROUP BY p.id "
                    "ORDER BY count(*) DESC, p.first_seen, p.id LIMIT 1", tuple(span)).fetchone()
        return None if row is None else str(row[0])

    def has_occurrence(self, key: str) -> bool:
        """Whether the occurrence ``key`` is registered."""
        with self._db(write=False) as db:
            return _has_tables(db) and db.execute(
                "SELECT 1 FROM occurrences WHERE key = ?", (key,)).fetchone() is not None

    def batches(self) -> Batches:
        """Every batch as ``(id, created, size, items)``, oldest first."""
        with self._db(write=False) as db:
            if not _has_tables(db):
                return []
            return [(str(b), str(c), int(s), int(n)) for b, c, s, n in db.execute(
                "SELECT b.id, b.created, b.size, (SELECT count(*) FROM occurrences o "
                "WHERE o.batch_id = b.id) FROM batches b ORDER BY b.id")]

    def transitions(self, pid: str) -> Transitions:
        """The status moves of ``pid`` as ``(from, to, at, by, note)``, oldest first."""
        with self._db(write=False) as db:
            if not _has_tables(db):
                return []
            return [(str(a), str(b), str(c), str(d), str(e)) for a, b, c, d, e in db.execute(
                "SELECT from_status, to_status, at, by, note FROM transitions "
                "WHERE pattern_id = ? ORDER BY rowid", (pid,))]

    # -- writes -------------------------------------------------------------------------

    def register(self, failures: Sequence[Failure], *, now: str,
                 batch_size: int = BATCH_SIZE,
                 roles: dict[str, dict[str, str]] | None = None) -> RegisterResult:
        """Add ``failures`` (see the module docstring); ``now`` stamps what changed.
        ``roles``: per failure key, record id -> its evidence role (default
        ``evidence``)."""
        new_patterns: list[str] = []
        touched: dict[str, bool] = {}
        moves: list[str] = []
        batches: dict[str, bool] = {}
        new_occurrences = new_evidence = 0
        with self._db(write=True) as db:
            for failure in failures:
                known = known_occurrence(db, failure)
                role_of = (roles or {}).get(failure.key, {})
                if known is not None:
                    key, pid = known
                    added = add_evidence(db, pid, key, failure.record_ids, role_of)
                    if added:
                        new_evidence += added
                        widen(db, pid, failure, now)
                        touched[pid] = True
                    continue
                pid = pattern_id(failure.signature)
                if create_pattern(db, pid, failure, now):
                    new_patterns.append(pid)
                batch = open_batch(db, batch_size, now)
                db.execute("INSERT INTO occurrences VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                           (failure.key, pid, failure.kind, failure.session_id,
                            failure.agent_id, failure.first_ts, failure.last_ts,
                            failure.summary, failure.severity, batch, now))
                new_occurrences += 1
                batches[batch] = True
                new_evidence += add_evidence(db, pid, failure.key, failure.record_ids, role_of)
                flagged = failure.kind == "flagged"
                db.execute("UPDATE patterns SET recurrence = recurrence + 1, flags = flags + ?"
                           " WHERE id = ?", (int(flagged), pid))
                widen(db, pid, failure, now)
                touched[pid] = True
                move = settle(db, pid, failure, now)
                if move:
                    moves.append(move)
        return RegisterResult(new_patterns=tuple(new_patterns), new_occurrences=new_occurrences,
                              new_evidence=new_evidence, touched=tuple(touched),
                              moves=tuple(moves), batches=tuple(batches))

    def move(self, pid: str, to: str, *, now: str, by: str, note: str = "") -> Pattern:
        """Move pattern ``pid`` to status ``to``; ``ValueError`` naming the allowed moves
        when ``patterns_lifecycle.ALLOWED`` has no such move, ``KeyError`` for an unknown
        pattern. Moving to the status it has is a no-op."""
        with self._db(write=True) as db:
            row = db.execute("SELECT status FROM patterns WHERE id = ?", (pid,)).fetchone()
            if row is None:
                raise KeyError(pid)
            current = str(row[0])
            if current != to:
                if not can_move(current, to):
                    from plugins.habitat.patterns_lifecycle import ALLOWED

                    allowed = ", ".join(sorted(ALLOWED.get(current, ()))) or "none"
                    raise ValueError(f"a {current} pattern cannot become {to} "
                                     f"(allowed: {allowed})")
                set_status(db, pid, current, to, now, by, note)
        found = self.get(pid)
        assert found is not None
        return found

    def propose_fix(self, pid: str, fix: str, *, now: str, by: str) -> Pattern:
        """Attach a proposed ``fix`` (text) to an actionable pattern and move it to
        ``proposed_fix`` (the FIX arc's entry point)."""
        with self._db(write=True) as db:
            db.execute("UPDATE patterns SET fix = ?, fix_outcome = '' WHERE id = ?", (fix, pid))
        return self.move(pid, "proposed_fix", now=now, by=by, note="fix proposed")

    def fix_outcome(self, pid: str, *, worked: bool, outcome: str, now: str,
                    by: str) -> Pattern:
        """Record how a proposed fix went: ``fixed`` when it worked, else back to
        ``actionable``; ``outcome`` is kept with the pattern."""
        with self._db(write=True) as db:
            db.execute("UPDATE patterns SET fix_outcome = ? WHERE id = ?", (outcome, pid))
        return self.move(pid, "fixed" if worked else "actionable", now=now, by=by, note=outcome)


def _has_tables(db: SqlConn) -> bool:
    if not isinstance(db, sqlite3.Connection):
        return True  # PostgreSQL: made on first use
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'patterns'").fetchone() is not None


def _pattern(row: Sequence[object], evidence: list[str]) -> Pattern:
    (pid, signature, kind, title, severity, status, first, last, recurrence, flags, fix,
     outcome, updated) = row
    return Pattern(id=str(pid), signature=str(signature), kind=str(kind), title=str(title),
                   severity=str(severity), status=str(status), first_seen=str(first),
                   last_seen=str(last), recurrence=int(str(recurrence)), flags=int(str(flags)),
                   fix=str(fix), fix_outcome=str(outcome), updated=str(updated),
                   evidence=tuple(evidence))
