"""The writes of a PostgreSQL vault, each inside the caller's transaction.

Every change takes the row lock of ``echo_change_counter`` first (``UPDATE ... RETURNING``
or ``SELECT ... FOR UPDATE``) and keeps it until commit. That one order for every writer
means no deadlock, change numbers that commit in order without gaps, and a check-then-
write (a file where a folder is, an append's "is the line there") that nothing can slip
between. Writes of one vault are therefore serialised; each is a few statements long.

A path may not be both a file and a folder (as in a folder vault, which an export must
be able to write): writing ``a/b.md`` where ``a`` is a file, or ``a`` where files under
``a/`` exist, is refused (exit 2) and changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from echo_core import not_found, usage_error

#: Rows per statement of a bulk write (keeps each statement's parameters moderate).
CHUNK = 1000


def ancestors(rel: str) -> list[str]:
    """The folders above ``rel``: ``a/b/c.md`` -> ``["a", "a/b"]``."""
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def folder_range(rel: str) -> tuple[str, str]:
    """The key range of every path under the folder ``rel`` (``'0'`` follows ``'/'``)."""
    return f"{rel}/", f"{rel}0"


class Writes:
    """The SQL of the writes, for the quoted schema ``s`` and the NOTIFY ``channel``."""

    def __init__(self, s: str, channel: str, where: str) -> None:
        self.s = s
        self.channel = channel
        self.where = where

    # --- the counter ------------------------------------------------------------------

    def lock_counter(self, conn: Any) -> None:
        """Take the change counter's row lock (held until commit) without a change."""
        conn.execute(f"SELECT last FROM {self.s}.echo_change_counter FOR UPDATE")

    def _bump(self, conn: Any, count: int) -> int:
        row = conn.execute(f"UPDATE {self.s}.echo_change_counter SET last = last + %s "
                           "RETURNING last", (count,)).fetchone()
        return int(row[0])

    def _notify(self, conn: Any, seq: int) -> None:
        conn.execute("SELECT pg_notify(%s, %s)", (self.channel, str(seq)))

    # --- checks -----------------------------------------------------------------------

    def check_shape(self, conn: Any, rels: Sequence[str]) -> None:
        """Exit 2 when a path of ``rels`` would be a file where a folder is, or below a
        file (among the stored paths or the given ones)."""
        given = set(rels)
        for rel in rels:
            clash = next((a for a in ancestors(rel) if a in given), None)
            if clash is not None:
                raise self._below_file(rel, clash)
        above = sorted({a for rel in rels for a in ancestors(rel)})
        if above:
            row = conn.execute(f"SELECT path FROM {self.s}.echo_files WHERE path = ANY(%s) "
                               "LIMIT 1", (above,)).fetchone()
            if row is not None:
                below = next(rel for rel in rels if row[0] in ancestors(rel))
                raise self._below_file(below, row[0])
        for start in range(0, len(rels), CHUNK):
            chunk = list(rels[start:start + CHUNK])
            row = conn.execute(
                f"SELECT t.p FROM unnest(%s::text[]) AS t(p) WHERE EXISTS (SELECT 1 FROM "
                f"{self.s}.echo_files f WHERE f.path >= t.p || '/' AND f.path < t.p || '0')"
                " LIMIT 1", (chunk,)).fetchone()
            if row is not None:
                raise usage_error(f"path {row[0]!r} is a folder in the vault {self.where}; "
                                  "give a file path")

    def _below_file(self, rel: str, parent: str) -> Exception:
        return usage_error(f"cannot create {rel!r}: a parent of it ({parent!r}) is a file in "
                           f"the vault {self.where}, not a folder; choose another path")

    # --- writes -----------------------------------------------------------------------

    def put(self, conn: Any, items: Sequence[tuple[str, bytes]]) -> int:
        """Create or replace each ``(path, bytes)`` (paths clean and distinct); one
        change each; returns the last change number (0 when ``items`` is empty)."""
        if not items:
            return 0
        last = self._bump(conn, len(items))  # the counter lock first (module docstring)
        self.check_shape(conn, [rel for rel, _ in items])
        first = last - len(items) + 1
        for start in range(0, len(items), CHUNK):
            chunk = items[start:start + CHUNK]
            paths = [rel for rel, _ in chunk]
            datas = [data for _, data in chunk]
            hashes = [hashlib.sha256(data).digest() for data in datas]
            seqs = list(range(first + start, first + start + len(chunk)))
            conn.execute(
                f"INSERT INTO {self.s}.echo_files (path, data, size, mtime, sha256, seq) "
                "SELECT p, d, octet_length(d), extract(epoch FROM clock_timestamp()), h, q "
                "FROM unnest(%s::text[], %s::bytea[], %s::bytea[], %s::bigint[]) "
                "AS t(p, d, h, q) ON CONFLICT (path) DO UPDATE SET data = EXCLUDED.data, "
                "size = EXCLUDED.size, mtime = EXCLUDED.mtime, sha256 = EXCLUDED.sha256, "
                "seq = EXCLUDED.seq", (paths, datas, hashes, seqs))
            conn.execute(
                f"INSERT INTO {self.s}.echo_changes (seq, path, op) "
                "SELECT q, p, 'w' FROM unnest(%s::bigint[], %s::text[]) AS t(q, p)",
                (seqs, paths))
        self._notify(conn, last)
        return last

    def put_one(self, conn: Any, rel: str, data: bytes) -> int:
        """``put`` of one file, in the fewest statements."""
        seq = self._bump(conn, 1)
        self.check_shape(conn, [rel])
        conn.execute(
            f"INSERT INTO {self.s}.echo_files (path, data, size, mtime, sha256, seq) "
            "VALUES (%s, %s, %s, extract(epoch FROM clock_timestamp()), %s, %s) "
            "ON CONFLICT (path) DO UPDATE SET data = EXCLUDED.data, size = EXCLUDED.size, "
            "mtime = EXCLUDED.mtime, sha256 = EXCLUDED.sha256, seq = EXCLUDED.seq",
            (rel, data, len(data), hashlib.sha256(data).digest(), seq))
        conn.execute(f"INSERT INTO {self.s}.echo_changes (seq, path, op) VALUES (%s, %s, 'w')",
                     (seq, rel))
        self._notify(conn, seq)
        return seq

    def put_if(self, conn: Any, rel: str, data: bytes, expected: bytes | None) -> int | None:
        """``put_one`` while the file's bytes are still ``expected`` (None: still absent;
        compared by SHA-256, which the table keeps); None, nothing written and no change
        number used, when they are not. The counter lock comes first and the file is read
        in a statement of its own after it (a fresh snapshot), so no write slips between
        the check and the write."""
        self.lock_counter(conn)
        row = conn.execute(f"SELECT sha256 FROM {self.s}.echo_files WHERE path = %s",
                           (rel,)).fetchone()
        found = None if row is None else bytes(row[0])
        wanted = None if expected is None else hashlib.sha256(expected).digest()
        if found != wanted:
            return None
        return self.put_one(conn, rel, data)

    def remove(self, conn: Any, rel: str) -> int:
        """Delete the file ``rel`` (44 when absent); returns its change number."""
        self.lock_counter(conn)
        gone = conn.execute(f"DELETE FROM {self.s}.echo_files WHERE path = %s RETURNING 1",
                            (rel,)).fetchone()
        if gone is None:
            raise not_found(f"no file {rel!r} in the vault {self.where}; nothing to delete")
        seq = self._bump(conn, 1)
        conn.execute(f"INSERT INTO {self.s}.echo_changes (seq, path, op) VALUES (%s, %s, 'd')",
                     (seq, rel))
        self._notify(conn, seq)
        return seq
