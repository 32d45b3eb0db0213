"""``PostgresStorage``: a vault kept in PostgreSQL, shared by many machines.

Contract: ``echo_core.protocols.Storage`` and ``ConditionalWrite`` (checked by
``StorageContract`` against a real server). Paths go through
``echo_core.paths.normalize_path``; a file's bytes are stored exactly (``pg_schema``), so
text comes back as written, line endings and all. Every write is one transaction
(``pg_writes``): readers see the old file or the new one, and a connection cut mid-write
leaves the old one. A thread holding the vault lock writes on the lock's connection, so
its writes land only while it holds the lock (``pg_lock``: one lost while held fails
them). The tables are created on first use (``create`` or the first request) and
migrated by the plugin.

Beyond the protocol: ``read_bytes`` / ``read_many_bytes`` / ``write_bytes`` /
``write_many`` (bulk transfers: one transaction, a few statements per thousand files),
``changes_since`` / ``last_change`` and ``channel`` (the change log and the NOTIFY
channel a replica follows), ``shared_history`` (true: note history is kept in the
store's hidden ``.echo-history`` folder, so every machine sees the same versions) with
``list_hidden`` (the files of a hidden folder, which ``list`` skips), ``pg_transaction`` (a connection in a transaction, for a
plugin's own tables in ``schema``), ``close``; ``former_identities`` and ``same_vault``
(how ``echo_core.ops.outbox`` finds the outboxes older versions kept for this vault under
an identity of one spelling of its URL, ``pg_identity``).
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Self

from echo_core import (
    EchoError,
    ExitCode,
    FileStat,
    StorageBase,
    normalize_path,
    not_found,
    pg_identity,
    single_line,
    with_line,
)
from plugins.storage_postgres.pg_connect import Connections
from plugins.storage_postgres.pg_listen import ChangeListener
from plugins.storage_postgres.pg_lock import advisory_lock_for
from plugins.storage_postgres.pg_schema import channel, ensure_schema
from plugins.storage_postgres.pg_stamps import StampQueries
from plugins.storage_postgres.pg_url import DEFAULT_SCHEMA, PgTarget
from plugins.storage_postgres.pg_writes import CHUNK, Writes, folder_range


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


class PostgresStorage(StampQueries, StorageBase):
    """A vault in the schema ``target.schema`` of the database ``target.conninfo``.

    ``pool_size`` bounds the pooled connections, ``timeout`` how long a request waits for
    a free one (s), ``connect_timeout`` each connection attempt (s). ``identity`` is the
    password-free URL, one for every spelling of the vault (``pg_identity``)."""

    #: Note history lives in this store (``echo_core.history_files``), not per machine.
    shared_history = True

    def __init__(self, target: PgTarget, *, pool_size: int = 8, timeout: float = 10.0,
                 connect_timeout: float = 5.0) -> None:
        self.target = target
        self.identity = target.identity
        self.schema = target.schema
        self.channel = channel(target.schema, DEFAULT_SCHEMA)
        self._s = f'"{target.schema}"'
        self._db = Connections(target.conninfo, target.identity, size=pool_size,
                               wait=timeout, connect_timeout=connect_timeout)
        self._writes = Writes(self._s, self.channel, target.identity)
        self._ready = False
        self._ready_guard = threading.Lock()

    def __repr__(self) -> str:
        return f"PostgresStorage({self.identity!r})"

    @property
    def former_identities(self) -> tuple[str, ...]:
        """The identities versions before this one gave this vault's URL, as spelled
        here, where it differs from ``identity`` (their state dir is another one)."""
        former = self.target.former_identity
        return () if former is None else (former,)

    def same_vault(self, recorded: str) -> bool:
        """Whether the identity a state dir recorded (``vault-seen.json``: this
        version's or an older one's, of any spelling) names this vault. Never raises."""
        return pg_identity.recorded_identity(recorded) == self.identity

    def close(self) -> None:
        """Close the pooled connections."""
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- plumbing ---------------------------------------------------------------------

    def _tx(self) -> AbstractContextManager[Any]:
        """A connection in a transaction, the tables made sure of once per storage."""
        self._make_ready()
        return self._db.transaction()

    def _write_tx(self) -> AbstractContextManager[Any]:
        """The transaction of a write: on the vault lock's connection when this thread
        holds the lock (``pg_lock``; ``BackendUnavailable`` once it was lost), else a
        pooled one as ``_tx``."""
        self._make_ready()
        held = advisory_lock_for(self.identity, self.schema).held_transaction(self.identity)
        return self._db.transaction() if held is None else held

    def _make_ready(self) -> None:
        """Make sure of the tables, once per storage."""
        if not self._ready:
            with self._ready_guard:
                if not self._ready:
                    with self._db.transaction() as conn:
                        ensure_schema(conn, self.schema)
                    self._ready = True

    def _missing(self, rel: str) -> EchoError:
        return not_found(f"no file {rel!r} in the vault {self.identity}; check the path "
                         "(`echo-memory ls` or `echo-memory recall` can find it)")

    def _decode(self, rel: str, data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EchoError(f"file {rel!r} in {self.identity} is not valid UTF-8 "
                            f"({exc.reason} at byte {exc.start}); it is an attachment, "
                            "read it as bytes", ExitCode.FAILURE) from None

    # --- reads ------------------------------------------------------------------------

    def read_bytes(self, path: str) -> bytes:
        """The file's bytes exactly as stored; 44 when absent."""
        rel = normalize_path(path)
        with self._tx() as conn:
            row = conn.execute(f"SELECT data FROM {self._s}.echo_files WHERE path = %s",
                               (rel,), binary=True).fetchone()
        if row is None:
            raise self._missing(rel)
        return bytes(row[0])

    def read(self, path: str) -> str:
        """Exact text of the file (UTF-8, line endings untouched); 44 when absent."""
        rel = normalize_path(path)
        return self._decode(rel, self.read_bytes(rel))

    def read_many_bytes(self, paths: Sequence[str]) -> dict[str, bytes | None]:
        """Bytes keyed by the given paths (missing -> ``None``), a query per thousand.
        Bad paths raise (exit 2) before anything is read."""
        targets = [(given, normalize_path(given)) for given in paths]
        unique = sorted({rel for _, rel in targets})
        found: dict[str, bytes] = {}
        if unique:
            with self._tx() as conn:
                for start in range(0, len(unique), CHUNK):
                    rows = conn.execute(
                        f"SELECT path, data FROM {self._s}.echo_files WHERE path = ANY(%s)",
                        (unique[start:start + CHUNK],), binary=True).fetchall()
                    found.update((rel, bytes(data)) for rel, data in rows)
        return {given: found.get(rel) for given, rel in targets}

    def read_many(self, paths: Sequence[str]) -> dict[str, str | None]:
        """Texts keyed by the given paths; a missing file maps to ``None``."""
        got = self.read_many_bytes(paths)
        return {given: None if data is None else self._decode(normalize_path(given), data)
                for given, data in got.items()}

    def exists(self, path: str) -> bool:
        """Whether ``path`` names a file (a folder is not a file)."""
        rel = normalize_path(path)
        with self._tx() as conn:
            row = conn.execute(f"SELECT 1 FROM {self._s}.echo_files WHERE path = %s",
                               (rel,)).fetchone()
        return row is not None

    def stat(self, path: str) -> FileStat:
        """Size in bytes and mtime (epoch seconds, the server's clock); 44 when absent."""
        rel = normalize_path(path)
        with self._tx() as conn:
            row = conn.execute(f"SELECT size, mtime FROM {self._s}.echo_files WHERE path = %s",
                               (rel,)).fetchone()
        if row is None:
            raise self._missing(rel)
        return FileStat(path=rel, size=int(row[0]), mtime=float(row[1]))

    def list(self, prefix: str = "") -> list[str]:
        """Sorted paths of the files under the folder ``prefix`` (recursive; hidden
        files and folders skipped; ``[]`` for a folder with no files). One index range
        scan, in code-point order."""
        rel = normalize_path(prefix, allow_root=True)
        if _hidden(rel):
            return []
        with self._tx() as conn:
            if rel:
                low, high = folder_range(rel)
                rows = conn.execute(f"SELECT path FROM {self._s}.echo_files WHERE path >= %s "
                                    "AND path < %s ORDER BY path", (low, high)).fetchall()
            else:
                rows = conn.execute(f"SELECT path FROM {self._s}.echo_files "
                                    "ORDER BY path").fetchall()
        return [row[0] for row in rows if not _hidden(row[0])]

    def list_hidden(self, prefix: str) -> builtins.list[str]:
        """Sorted paths of every file under the folder ``prefix``, hidden ones included
        (``list`` skips them): how shared history finds its own files."""
        rel = normalize_path(prefix)
        low, high = folder_range(rel)
        with self._tx() as conn:
            rows = conn.execute(f"SELECT path FROM {self._s}.echo_files WHERE path >= %s "
                                "AND path < %s ORDER BY path", (low, high)).fetchall()
        return [row[0] for row in rows]

    # --- writes -----------------------------------------------------------------------

    def write_bytes(self, path: str, data: bytes) -> None:
        """Create or replace the file with ``data`` (any bytes), in one transaction."""
        rel = normalize_path(path)
        with self._write_tx() as conn:
            self._writes.put_one(conn, rel, bytes(data))

    def write(self, path: str, text: str) -> None:
        """Atomically create or replace the file with ``text`` (UTF-8, as given)."""
        self.write_bytes(path, text.encode("utf-8"))

    def write_unless_changed(self, path: str, text: str, expected: str | None) -> bool:
        """``write`` while the file still holds exactly ``expected`` (None: still absent),
        checked and written in one transaction that holds the change counter's lock
        (``Writes.put_if``), so of two such writes from the same ``expected`` at most one
        lands (``ConditionalWrite``). False, nothing written and no change logged, when
        the file changed."""
        rel = normalize_path(path)
        wanted = None if expected is None else expected.encode("utf-8")
        with self._write_tx() as conn:
            return self._writes.put_if(conn, rel, text.encode("utf-8"), wanted) is not None

    def write_many(self, files: Mapping[str, str | bytes]) -> None:
        """Create or replace every file of ``files`` (path -> text or bytes) in ONE
        transaction: all of them land or none. Paths are validated (exit 2) first; two
        spellings of one path: the later one wins."""
        items: dict[str, bytes] = {}
        for given, content in files.items():
            rel = normalize_path(given)
            items.pop(rel, None)
            items[rel] = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        if not items:
            return
        with self._write_tx() as conn:
            self._writes.put(conn, list(items.items()))

    def append_line(self, path: str, line: str) -> bool:
        """Append ``line`` unless an identical line is present; True when appended.

        One transaction holding the change counter's lock, so it is atomic and
        idempotent across processes and machines: of two concurrent appends of the same
        line exactly one appends. Missing file: created; a last line without a newline
        gets one first; the file's line ending (CRLF or LF) is used."""
        rel = normalize_path(path)
        stripped = single_line(rel, line)
        with self._write_tx() as conn:
            self._writes.lock_counter(conn)
            row = conn.execute(f"SELECT data FROM {self._s}.echo_files WHERE path = %s",
                               (rel,), binary=True).fetchone()
            current = "" if row is None else self._decode(rel, bytes(row[0]))
            updated = with_line(current, stripped)
            if updated is None:
                return False
            self._writes.put_one(conn, rel, updated.encode("utf-8"))
            return True

    def delete(self, path: str) -> None:
        """Remove the file; 44 when absent (or when ``path`` is a folder)."""
        rel = normalize_path(path)
        with self._write_tx() as conn:
            self._writes.remove(conn, rel)

    # --- the change log ---------------------------------------------------------------

    def last_change(self) -> int:
        """The number of the last committed change (0 for a vault never written)."""
        with self._tx() as conn:
            row = conn.execute(f"SELECT last FROM {self._s}.echo_change_counter").fetchone()
        return int(row[0]) if row else 0

    def changes_since(self, seq: int,
                      limit: int = 10000) -> builtins.list[tuple[int, str, str]]:
        """``(seq, path, op)`` of the changes after ``seq``, oldest first (``op``: ``w``
        written, ``d`` deleted); at most ``limit``. Gapless: catching up from the last
        number seen misses nothing."""
        with self._tx() as conn:
            rows = conn.execute(f"SELECT seq, path, op FROM {self._s}.echo_changes "
                                "WHERE seq > %s ORDER BY seq LIMIT %s", (seq, limit)).fetchall()
        return [(int(q), str(p), str(op)) for q, p, op in rows]

    def change_listener(self) -> ChangeListener:
        """A new, unopened ``LISTEN`` on ``channel`` over a connection of its own
        (``pg_listen``): what a long-lived process waits on between catch-ups."""
        return ChangeListener(self._db, self.channel)

    # --- backend ----------------------------------------------------------------------

    def lock(self, timeout: float = 10.0) -> AbstractContextManager[None]:
        """The cross-process, cross-machine vault lock: a PostgreSQL advisory lock held
        by a dedicated connection (``pg_lock``); re-entrant within a thread; exit 75
        after ``timeout`` s naming the holder. The holding thread's writes run on that
        connection; once it is cut they raise ``BackendUnavailable`` (the lock is lost)."""
        return advisory_lock_for(self.identity, self.schema).hold(self._db, timeout)

    def pg_transaction(self) -> AbstractContextManager[Any]:
        """A pooled psycopg connection inside one transaction on this vault's database
        (committed when the block ends; psycopg failures mapped as for any request), the
        vault's tables made sure of. For plugins keeping their own tables in ``schema``
        (the ``pgfts`` ranker finds this method by duck typing). When this thread holds
        the vault lock it is the lock's own connection, as for the vault's own writes
        (``_write_tx``): once that lock is lost, a plugin's write under it fails
        (``BackendUnavailable``) and commits nothing."""
        return self._write_tx()

    def ping(self) -> None:
        """Return when the server answers; else ``BackendUnavailable`` (or 78 when it
        refuses our credentials or the database does not exist)."""
        with self._db.transaction() as conn:
            conn.execute("SELECT 1")

    def create(self) -> None:
        """Create the schema and tables when absent (idempotent; files untouched)."""
        with self._tx():
            pass
