"""The per-machine record of what the indexes were last made to agree with.

One SQLite file in the state dir (``vault-manifest.sqlite``) holding, for every note the
indexes cover, its size, mtime and content hash as of the last time both indexes were
synced with it, plus every folder's mtime and a few facts (when the last fast and full
sweeps ran, where the rotating check stopped). The fast sweep and the freshness check
compare the vault with it to find notes that are new, gone or changed without reading
the unchanged ones (``echo_core.ops.fast_sweep``, ``echo_core.ops.freshness``).

It is a cache: deleting it costs one rebuild of the indexes (the next check finds no
baseline). Many processes share it (WAL, a busy timeout); a row is written only after
the indexes took the change it records, so a crash leaves the change to be found again.
"""

from __future__ import annotations

import marshal
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

from echo_core.sqlite_wal import settle_wal

FILE_NAME = "vault-manifest.sqlite"
#: The notes table as one marshal file beside it (``VaultManifest.snapshot``).
SNAPSHOT_SUFFIX = ".notes"
_SNAPSHOT_FORMAT = 1
SCHEMA = 1
BUSY_TIMEOUT = 10.0
_CHUNK = 500

#: path -> (size, mtime_ns, content hash or "" when not read yet)
Row = tuple[int, int, str]

_DDL = """
CREATE TABLE IF NOT EXISTS notes(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL,
                                 size INTEGER NOT NULL, mtime INTEGER NOT NULL,
                                 hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS folders(path TEXT PRIMARY KEY, mtime INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;
"""


class RecordedNotes(Mapping[str, Row]):
    """Every recorded note, held as two dicts (``stamps``: path -> (size, mtime_ns);
    ``hashes``: path -> content hash) and read as rows, so the caller can compare a
    whole scan with ``stamps`` in one dict comparison."""

    def __init__(self, stamps: dict[str, tuple[int, int]], hashes: dict[str, str]) -> None:
        self.stamps = stamps
        self.hashes = hashes

    def __getitem__(self, path: str) -> Row:
        stamp = self.stamps[path]
        return (stamp[0], stamp[1], self.hashes[path])

    def __contains__(self, path: object) -> bool:
        return path in self.hashes

    def __iter__(self) -> Iterator[str]:
        return iter(self.hashes)

    def __len__(self) -> int:
        return len(self.hashes)

    def unhashed(self) -> list[str]:
        """Notes recorded with a stamp but no hash yet (they are to be read)."""
        return [path for path, digest in self.hashes.items() if not digest]

    def without(self, paths: Iterable[str]) -> RecordedNotes:
        """A copy with ``paths`` left out."""
        gone = set(paths)
        if not gone:
            return self
        return RecordedNotes({p: s for p, s in self.stamps.items() if p not in gone},
                             {p: h for p, h in self.hashes.items() if p not in gone})


class VaultManifest:
    """The manifest file of one vault's state dir (opened on first use, thread-safe)."""

    def __init__(self, state_dir: str | Path) -> None:
        self.path = Path(state_dir) / FILE_NAME
        self._db: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    # -- connection ------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT, isolation_level=None,
                                 check_same_thread=False)
            try:
                if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
                    db.execute("BEGIN IMMEDIATE")
                    if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
                        for table in ("notes", "folders", "meta"):
                            db.execute(f"DROP TABLE IF EXISTS {table}")
                        for statement in _DDL.split(";"):
                            if statement.strip():
                                db.execute(statement)
                        db.execute(f"PRAGMA user_version = {SCHEMA}")
                    db.execute("COMMIT")
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
            except sqlite3.DatabaseError:
                db.close()
                self._discard()
                raise
            self._db = db
        return self._db

    def _discard(self) -> None:
        """Remove an unreadable file (a cache: the next sweep rebuilds from the vault)."""
        for suffix in ("", "-wal", "-shm"):
            with suppress(OSError):
                Path(f"{self.path}{suffix}").unlink()

    def close(self) -> None:
        """Close the connection (reopened on next use)."""
        with self._lock:
            if self._db is not None:
                with suppress(sqlite3.Error):
                    self._db.close()
                self._db = None

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = self._connect()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                with suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            settle_wal(db, self.path)

    # -- meta ------------------------------------------------------------------------

    def get(self, key: str) -> str | None:
        """A recorded fact (None when absent)."""
        with self._lock:
            row = self._connect().execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set(self, **facts: str) -> None:
        """Record facts."""
        with self._write() as db:
            db.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", facts.items())

    def has_baseline(self) -> bool:
        """Whether a sweep has recorded the whole vault here once."""
        return self.get("baseline") is not None

    # -- where the rotating check stopped ---------------------------------------------

    @property
    def _cursor_path(self) -> Path:
        return self.path.with_name(self.path.name + ".cursor")

    def cursor(self) -> int:
        """Where the last bounded check stopped (a note id; 0 to start over)."""
        try:
            return int(self._cursor_path.read_text("ascii").strip() or 0)
        except (OSError, ValueError):
            return 0

    def set_cursor(self, cursor: int) -> None:
        """Remember where the bounded check stopped: a plain file written without fsync
        (a database commit would cost a checkpoint with an fsync when the process ends;
        a lost cursor only means starting the rotation over)."""
        with suppress(OSError):
            self._cursor_path.write_text(str(cursor), "ascii")

    # -- notes and folders -------------------------------------------------------------

    def notes(self) -> dict[str, Row]:
        """Every recorded note."""
        with self._lock:
            rows = self._connect().execute("SELECT path, size, mtime, hash FROM notes")
            return {path: (size, mtime, digest) for path, size, mtime, digest in rows}

    def snapshot(self) -> RecordedNotes:
        """Every recorded note, as ``notes()`` gives them, read from the snapshot file
        when it was written at the manifest's current ``generation`` (every change to the
        notes table makes a new one), else from the table, then saved as that file for
        the next process (a marshal file: loading it is several times faster than
        turning 100k rows into Python objects)."""
        with self._lock:
            db = self._connect()
            if self.get("generation") is None:  # a manifest from before snapshots
                with self._write() as writing:
                    writing.execute("INSERT OR IGNORE INTO meta(k, v) VALUES ('generation', ?)",
                                    (_generation_token(),))
            db.execute("BEGIN")
            try:
                row = db.execute("SELECT v FROM meta WHERE k = 'generation'").fetchone()
                generation = None if row is None else str(row[0])
                cached = self._read_snapshot(generation)
                if cached is not None:
                    return cached
                stamps: dict[str, tuple[int, int]] = {}
                hashes: dict[str, str] = {}
                for path, size, mtime, digest in db.execute(
                        "SELECT path, size, mtime, hash FROM notes"):
                    stamps[path] = (size, mtime)
                    hashes[path] = digest
            finally:
                db.execute("COMMIT")
        if generation is not None:
            self._write_snapshot(generation, stamps, hashes)
        return RecordedNotes(stamps, hashes)

    @property
    def _snapshot_path(self) -> Path:
        return self.path.with_name(self.path.name + SNAPSHOT_SUFFIX)

    def _read_snapshot(self, generation: str | None) -> RecordedNotes | None:
        if generation is None:
            return None
        try:
            loaded = marshal.loads(self._snapshot_path.read_bytes())
        except (OSError, ValueError, EOFError, TypeError):
            return None
        if (not isinstance(loaded, tuple) or len(loaded) != 4
                or loaded[:2] != (_SNAPSHOT_FORMAT, generation)
                or not isinstance(loaded[2], dict) or not isinstance(loaded[3], dict)):
            return None
        return RecordedNotes(loaded[2], loaded[3])

    def _write_snapshot(self, generation: str, stamps: dict[str, tuple[int, int]],
                        hashes: dict[str, str]) -> None:
        """Write the snapshot file whole (a temporary file renamed over it; no fsync: a
        lost or torn one is only read from the table again)."""
        tmp = self._snapshot_path.with_name(f"{self._snapshot_path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_bytes(marshal.dumps((_SNAPSHOT_FORMAT, generation, stamps, hashes)))
            os.replace(tmp, self._snapshot_path)
        except OSError:
            with suppress(OSError):
                tmp.unlink()

    def rows(self, paths: Iterable[str]) -> dict[str, Row]:
        """The recorded rows of those paths (absent ones left out)."""
        wanted = list(paths)
        found: dict[str, Row] = {}
        with self._lock:
            db = self._connect()
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start:start + _CHUNK]
                for path, size, mtime, digest in db.execute(
                        "SELECT path, size, mtime, hash FROM notes WHERE path IN "
                        f"({','.join('?' * len(chunk))})", chunk):
                    found[path] = (size, mtime, digest)
        return found

    def under(self, folder: str) -> list[str]:
        """Recorded note paths inside ``folder`` (any depth; ``""`` is everything)."""
        with self._lock:
            db = self._connect()
            if not folder:
                return [p for (p,) in db.execute("SELECT path FROM notes")]
            low = folder + "/"
            return [p for (p,) in db.execute(
                "SELECT path FROM notes WHERE path >= ? AND path < ?", (low, folder + "0"))]

    def directly_in(self, folder: str) -> list[str]:
        """Recorded note paths right in ``folder``, not in a sub-folder (``""``: the vault's
        top level). SQLite filters the sub-folders' notes out: a folder holding 20k notes
        a level down costs no Python object per note."""
        with self._lock:
            db = self._connect()
            if not folder:
                return [p for (p,) in db.execute(
                    "SELECT path FROM notes WHERE instr(path, '/') = 0")]
            low = folder + "/"
            return [p for (p,) in db.execute(
                "SELECT path FROM notes WHERE path >= ? AND path < ? "
                "AND instr(substr(path, ?), '/') = 0", (low, folder + "0", len(low) + 1))]

    def window(self, after: int, limit: int) -> list[tuple[int, str, int, int]]:
        """Up to ``limit`` notes with id > ``after`` in id order: (id, path, size, mtime)."""
        with self._lock:
            return list(self._connect().execute(
                "SELECT id, path, size, mtime FROM notes WHERE id > ? ORDER BY id LIMIT ?",
                (after, limit)))

    def folders(self) -> dict[str, int]:
        """Every recorded folder and its mtime."""
        with self._lock:
            return dict(self._connect().execute("SELECT path, mtime FROM folders"))

    def update(self, notes: Mapping[str, Row | None] = {},
               folders: Mapping[str, int | None] = {},
               **facts: str) -> None:
        """Upsert (a row) or forget (None) notes and folders, and record facts, in one
        transaction."""
        with self._write() as db:
            gone = [(p,) for p, row in notes.items() if row is None]
            db.executemany("DELETE FROM notes WHERE path = ?", gone)
            db.executemany(
                "INSERT INTO notes(path, size, mtime, hash) VALUES (?, ?, ?, ?) ON CONFLICT(path) "
                "DO UPDATE SET size = excluded.size, mtime = excluded.mtime, hash = excluded.hash",
                [(p, *row) for p, row in notes.items() if row is not None])
            db.executemany("DELETE FROM folders WHERE path = ?",
                           [(p,) for p, m in folders.items() if m is None])
            db.executemany("INSERT OR REPLACE INTO folders(path, mtime) VALUES (?, ?)",
                           [(p, m) for p, m in folders.items() if m is not None])
            db.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", facts.items())
            if notes:
                _new_generation(db)

    def replace(self, notes: Mapping[str, Row], folders: Mapping[str, int], **facts: str) -> None:
        """Make the record exactly ``notes`` and ``folders`` (a baseline), plus facts."""
        with self._write() as db:
            db.execute("DELETE FROM notes")
            db.execute("DELETE FROM folders")
            db.executemany("INSERT INTO notes(path, size, mtime, hash) VALUES (?, ?, ?, ?)",
                           [(p, *row) for p, row in sorted(notes.items())])
            db.executemany("INSERT INTO folders(path, mtime) VALUES (?, ?)", sorted(folders.items()))
            db.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", facts.items())
            _new_generation(db)


def _new_generation(db: sqlite3.Connection) -> None:
    """Mark the notes table changed (in the writing transaction): a snapshot file of an
    older generation is not used again."""
    db.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('generation', ?)",
               (_generation_token(),))


def _generation_token() -> str:
    """A fresh generation token: 32 random hex digits (``os.urandom``; the ``uuid``
    module would cost a cold process ~0.5 ms to import for the same)."""
    return os.urandom(16).hex()
