"""The loom's search index: SQLite with FTS5, derived from the day files.

``<habitat_dir>/loom_index.sqlite`` holds one row per record (``records``: its id, where
its line is — day and byte offset —, its time, kind, agent, session, parent, error
flag) and a contentless FTS5 table (``records_fts``: the words of its text, result and
tags, Porter-stemmed). The day files stay the record: the index holds no text, a hit is
read back from its line, and the whole file can be deleted and rebuilt at any time.

Catching up (``LoomIndex.catch_up``, called before each search): every day file whose
size passed its indexed offset (``files``: day -> the byte after the last line indexed,
and the lowest and highest rowid of its records, which bound a time window's search)
is read from that offset, whole lines only, and its new records are added. A day file
shorter than its offset (replaced by hand, restored from a backup) has the whole index
rebuilt (rows and words: a contentless FTS5 table forgets a row only given its words). One catch-up runs at a time across processes (``BEGIN IMMEDIATE`` and
the offsets re-read inside it), so no record is indexed twice. A line that is not a
record is skipped (its offset still moves on).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Any, Self

from plugins.habitat.loom import Loom, day_lines
from plugins.habitat.record import Record

__all__ = ["INDEX_NAME", "Located", "LoomIndex"]

INDEX_NAME = "loom_index.sqlite"
_VERSION = "2"
_BATCH = 5000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(day TEXT PRIMARY KEY, offset INTEGER NOT NULL,
                                 lo INTEGER, hi INTEGER);
CREATE TABLE IF NOT EXISTS records(
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL, day TEXT NOT NULL,
    offset INTEGER NOT NULL, ts TEXT NOT NULL, kind TEXT NOT NULL,
    agent_id TEXT NOT NULL, session_id TEXT NOT NULL, parent_id TEXT,
    is_error INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS records_id ON records(id);
CREATE INDEX IF NOT EXISTS records_session ON records(session_id, rowid);
CREATE INDEX IF NOT EXISTS records_day ON records(day);
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
    text, result, tags, content='', tokenize='porter unicode61');
"""


class Located:
    """Where one indexed record's line is (``day``, ``offset``) and its ``rowid``."""

    __slots__ = ("day", "offset", "rowid")

    def __init__(self, rowid: int, day: str, offset: int) -> None:
        self.rowid = rowid
        self.day = day
        self.offset = offset


class LoomIndex:
    """The index of the loom ``loom`` in the file ``path`` (module docstring). Open it
    with ``LoomIndex.open``; ``close`` it (or use ``with``)."""

    def __init__(self, loom: Loom, path: Path, db: sqlite3.Connection) -> None:
        self.loom = loom
        self.path = path
        self.db = db
        #: word -> (held by many records, rows indexed when asked): ``loom_rank``'s memo
        self.common_words: dict[str, tuple[bool, int]] = {}

    @classmethod
    def open(cls, loom: Loom, path: Path) -> LoomIndex:
        """Open (creating) the index; one of another format is rebuilt from scratch."""
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        version = None
        try:
            row = db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
            version = row[0] if row else None
        except sqlite3.OperationalError:
            pass
        if version not in (None, _VERSION):
            db.executescript("DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS files; "
                             "DROP TABLE IF EXISTS records; DROP TABLE IF EXISTS records_fts;")
        db.executescript(_SCHEMA)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (_VERSION,))
        return cls(loom, path, db)

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- upkeep -------------------------------------------------------------------------

    def _behind(self) -> list[tuple[str, int, int]]:
        """``(day, indexed offset, size)`` of every day file with lines not indexed."""
        known = dict(self.db.execute("SELECT day, offset FROM files").fetchall())
        out = []
        for day in self.loom.days():
            try:
                size = os.stat(self.loom.day_file(day)).st_size
            except FileNotFoundError:
                continue
            if size != known.get(day, 0):
                out.append((day, int(known.get(day, 0)), size))
        return out

    def catch_up(self) -> int:
        """Index every record appended since the last catch-up; the number added."""
        if not self._behind():
            return 0
        added = 0
        self.db.execute("BEGIN IMMEDIATE")
        try:
            behind = self._behind()
            if any(size < offset for _, offset, size in behind):
                self._clear()  # a day file was replaced: index every one again
                behind = self._behind()
            for day, offset, _ in behind:
                added += self._index_day(day, offset)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return added

    def _clear(self) -> None:
        self.db.execute("DELETE FROM records")
        self.db.execute("DELETE FROM files")
        self.db.execute("INSERT INTO records_fts(records_fts) VALUES ('delete-all')")

    def _index_day(self, day: str, offset: int) -> int:
        rows: list[tuple[Any, ...]] = []
        words: list[tuple[Any, ...]] = []
        end = offset
        added = 0
        next_rowid = int(self.db.execute("SELECT coalesce(max(rowid), 0) FROM records")
                         .fetchone()[0]) + 1
        first_rowid = next_rowid
        for line_end, line in day_lines(self.loom.day_file(day), offset):
            start, end = end, line_end
            record = _parse(line)
            if record is None:
                continue
            rows.append((next_rowid, record.id, day, start, record.ts, record.kind,
                         record.agent_id, record.session_id, record.parent_id,
                         int(record.is_error)))
            words.append((next_rowid, *_words(record)))
            next_rowid += 1
            if len(rows) >= _BATCH:
                added += self._insert(rows, words)
                rows, words = [], []
        added += self._insert(rows, words)
        self.db.execute("INSERT INTO files VALUES (?, ?, ?, ?) ON CONFLICT(day) DO UPDATE SET "
                        "offset = excluded.offset, lo = coalesce(lo, excluded.lo), "
                        "hi = coalesce(excluded.hi, hi)",
                        (day, end, first_rowid if added else None,
                         next_rowid - 1 if added else None))
        return added

    def _insert(self, rows: list[tuple[Any, ...]], words: list[tuple[Any, ...]]) -> int:
        self.db.executemany("INSERT INTO records VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
        self.db.executemany("INSERT INTO records_fts(rowid, text, result, tags) "
                            "VALUES (?, ?, ?, ?)", words)
        return len(rows)

    # -- reads --------------------------------------------------------------------------

    def read(self, located: Located) -> Record | None:
        """The record at ``located`` (None when its line is gone or not a record)."""
        try:
            with open(self.loom.day_file(located.day), "rb") as f:
                f.seek(located.offset)
                line = f.readline()
        except OSError:
            return None
        return _parse(line) if line.endswith(b"\n") else None

    def read_many(self, located: list[Located]) -> list[Record | None]:
        """The records at ``located``, in that order (None for one that is unreadable)."""
        out: list[Record | None] = []
        handles: dict[str, Any] = {}
        with contextlib.ExitStack() as stack:
            for where in located:
                f = handles.get(where.day)
                if f is None:
                    try:
                        f = open(self.loom.day_file(where.day), "rb")  # noqa: SIM115
                    except OSError:
                        out.append(None)
                        continue
                    handles[where.day] = stack.enter_context(f)
                f.seek(where.offset)
                line = f.readline()
                out.append(_parse(line) if line.endswith(b"\n") else None)
        return out

    def rowid_bounds(self, low: str | None, high: str | None) -> tuple[int | None, int | None]:
        """Rowids that hold every record with ``low <= ts < high`` (by their days:
        ``(None, None)`` when unbounded); the exact ``ts`` check is the query's."""
        lo = hi = None
        if low is not None:
            row = self.db.execute("SELECT min(lo) FROM files WHERE day >= ?", (low[:10],))
            lo = row.fetchone()[0]
            lo = 2**62 if lo is None else lo  # nothing that late: an empty range
        if high is not None:
            row = self.db.execute("SELECT max(hi) FROM files WHERE day <= ?", (high[:10],))
            hi = row.fetchone()[0]
            hi = -1 if hi is None else hi  # nothing that early
        return lo, hi

    def row_count(self) -> int:
        """How many records are indexed."""
        return int(self.db.execute("SELECT coalesce(max(rowid), 0) FROM records").fetchone()[0])

    def locate_id(self, record_id: str) -> Located | None:
        """Where the record ``record_id`` is (None when not indexed)."""
        row = self.db.execute("SELECT rowid, day, offset FROM records WHERE id=? "
                              "ORDER BY rowid LIMIT 1", (record_id,)).fetchone()
        return None if row is None else Located(*row)

    def session_located(self, session_id: str) -> list[Located]:
        """Where every record of ``session_id`` is, in record order."""
        return [Located(*row) for row in self.db.execute(
            "SELECT rowid, day, offset FROM records WHERE session_id=? ORDER BY rowid",
            (session_id,))]


def _parse(line: bytes) -> Record | None:
    import orjson

    try:
        return Record.from_json(orjson.loads(line))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _words(record: Record) -> tuple[str, str, str]:
    return record.text, record.result, " ".join(record.tags)
