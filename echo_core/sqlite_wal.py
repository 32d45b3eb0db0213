"""Keeping a SQLite write-ahead log short for the processes that open the database next.

A process that opens a WAL database while no other connection has it open rebuilds the
log's index by reading every valid frame of the ``-wal`` file: ~18 ms for the 36 MB a
rebuild of the entity-name cache leaves at 100k notes, paid by every cold hook and CLI
call until something truncates the log. SQLite truncates it only when the last
connection closes cleanly, which a short-lived process that exits with its connections
still open (ours do, to exit fast) never does. So a writer that has let the log grow
checkpoints it and truncates it itself (``settle_wal``), right after its commit.

The rebuilding costs about 0.4 ms plus 0.35 ms per MB of log (this machine, page cache
warm), and every cold process pays it for every such database it opens: a prompt hook
opens three. So the bound is 1 MB, not the 4 MB SQLite's own auto-checkpoint lets a log
reach: a cold reader pays at most ~0.35 ms per database, and a writer settles about
once per megabyte written (~3 ms: the checkpoint and its two syncs).
"""

from __future__ import annotations

import os
import sqlite3

__all__ = ["SETTLE_BYTES", "SETTLE_WAIT_MS", "settle_wal"]

#: A log past this size is checkpointed and truncated after a write.
SETTLE_BYTES = 1 << 20
#: How long the checkpoint waits for readers in other processes before leaving the log
#: to a later write (it needs them off the old frames).
SETTLE_WAIT_MS = 100


def settle_wal(db: sqlite3.Connection, path: str | os.PathLike[str]) -> bool:
    """After a committed write on ``db`` (the database file at ``path``, WAL mode, no
    transaction open): when its ``-wal`` file is over ``SETTLE_BYTES``, checkpoint it
    whole and truncate it, waiting at most ``SETTLE_WAIT_MS`` for readers. True when the
    log was truncated; False when it was small, missing, or busy (a later write tries
    again). Never raises ``sqlite3.Error``."""
    try:
        if os.stat(f"{os.fspath(path)}-wal").st_size <= SETTLE_BYTES:
            return False
    except OSError:
        return False
    try:
        waited = db.execute("PRAGMA busy_timeout").fetchone()[0]
        db.execute(f"PRAGMA busy_timeout = {SETTLE_WAIT_MS}")
        try:
            busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            db.execute(f"PRAGMA busy_timeout = {int(waited)}")
    except sqlite3.Error:
        return False
    return not busy
