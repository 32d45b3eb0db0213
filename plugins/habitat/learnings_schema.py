"""The learnings store's SQLite file: its tables and how a connection is opened.

``<habitat_dir>/learnings.sqlite``, WAL journal, ``synchronous=FULL`` (a store is on disk
when its transaction commits, before the caller is answered). Every change runs in one
``BEGIN IMMEDIATE`` transaction, so processes that store at the same time take turns:
the second one sees the first one's row and reinforces it.

Tables:

* ``learnings``: one row per learning (``learnings.Learning``); ``compact`` is the
  normal form without spaces (exact duplicates), ``words`` the content words as JSON
  (near duplicates, ``learnings_similarity``), ``project`` the project it was learned in
  ("": every project).
* ``learning_tokens``: (token, learning) pairs, to find the learnings that share words
  with a new one without reading every row.
* ``provenance``: every store of a learning, in order (who, when, why, their own text):
  the first is the learning's own provenance, the later ones its reinforcements.
* ``state_changes``: every change of state (stored, reinforced, approved, rejected,
  demoted, revived, synced from the vault), never deleted.
* ``learning_fts``: FTS5 over content and tags (``learning_search``).
* ``insight_index``: which insight notes the insight ranker holds, by content digest
  (``insight_ranker``).

Versions (``meta.schema_version``): 1, the first; 2 added ``learnings.project``. A store
of an older version is migrated when it is opened (``_migrate``, one transaction, under
the init lock): its learnings keep every field, with ``project`` "" (every project).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plugins.habitat.pg_sql import SqlConn

__all__ = ["SCHEMA_VERSION", "connect", "log_change"]

SCHEMA_VERSION = 2
#: Seconds a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT_S = 30.0

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS learnings (
    id TEXT PRIMARY KEY,
    content TEXT NOT NULL,
    compact TEXT NOT NULL,
    words TEXT NOT NULL,
    type TEXT NOT NULL,
    tags TEXT NOT NULL,
    state TEXT NOT NULL,
    recurrence INTEGER NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    rationale TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    decided TEXT NOT NULL DEFAULT '',
    decided_recurrence INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL DEFAULT '',
    insight_path TEXT,
    note_status TEXT NOT NULL DEFAULT '',
    project TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS learnings_compact ON learnings (compact);
CREATE INDEX IF NOT EXISTS learnings_state ON learnings (state, last_seen);
CREATE TABLE IF NOT EXISTS learning_tokens (
    token TEXT NOT NULL,
    learning_id TEXT NOT NULL,
    PRIMARY KEY (token, learning_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS provenance (
    learning_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    ts TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    rationale TEXT NOT NULL,
    content TEXT NOT NULL,
    PRIMARY KEY (learning_id, seq)
);
CREATE INDEX IF NOT EXISTS provenance_agent ON provenance (agent_id, learning_id);
CREATE TABLE IF NOT EXISTS state_changes (
    learning_id TEXT NOT NULL,
    ts TEXT NOT NULL,
    before TEXT NOT NULL,
    after TEXT NOT NULL,
    why TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS state_changes_learning ON state_changes (learning_id);
CREATE VIRTUAL TABLE IF NOT EXISTS learning_fts USING fts5 (
    id UNINDEXED, content, tags, tokenize = 'porter unicode61'
);
CREATE TABLE IF NOT EXISTS insight_index (path TEXT PRIMARY KEY, digest TEXT NOT NULL);
"""


def connect(path: Path) -> sqlite3.Connection:
    """An open connection to the store at ``path`` (created, with its tables, on first
    use: under an exclusive lock of ``<path>.init-lock``, so processes opening a new
    store at once create it once; one of an older version is migrated the same way).
    Autocommit mode: callers open their own ``BEGIN
    IMMEDIATE`` transactions. Raises ``sqlite3.DatabaseError`` for a file that is not
    such a store."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        version = _version(conn)
        if version is None or version < SCHEMA_VERSION:
            with _init_lock(path):
                version = _version(conn)
                if version is None:
                    _create(conn)
                elif version < SCHEMA_VERSION:
                    _migrate(conn, version)
        conn.execute("PRAGMA synchronous = FULL")
    except BaseException:
        conn.close()
        raise
    return conn


@contextlib.contextmanager
def _init_lock(path: Path) -> Iterator[None]:
    fd = os.open(f"{path}.init-lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _create(conn: sqlite3.Connection) -> None:
    """The WAL journal and every table (one transaction)."""
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN IMMEDIATE")
    for statement in _statements(_DDL):
        conn.execute(statement)
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                 (str(SCHEMA_VERSION),))
    conn.execute("COMMIT")


def _migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring a store of schema ``version`` to ``SCHEMA_VERSION`` (one transaction)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(learnings)")}
        if version < 2 and "project" not in columns:
            conn.execute("ALTER TABLE learnings ADD COLUMN project TEXT NOT NULL DEFAULT ''")
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                     (str(SCHEMA_VERSION),))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _version(conn: sqlite3.Connection) -> int | None:
    """The schema version recorded in the file, None when it has no tables yet."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:
        return None
    return int(row[0]) if row else None


def _statements(ddl: str) -> list[str]:
    """The statements of ``ddl`` (none holds a ``;`` inside)."""
    return [s.strip() for s in ddl.split(";") if s.strip()]


def log_change(conn: SqlConn, learning_id: str, stamp: str, before: str,
               after: str, why: str) -> None:
    """Record one change of a learning's state (``before`` "" for a new learning)."""
    conn.execute("INSERT INTO state_changes VALUES (?, ?, ?, ?, ?)",
                 (learning_id, stamp, before, after, why))
