"""The habitat's seam to PostgreSQL: one SQL text for both stores, two databases.

The learnings store and the pattern registry keep their logic once, written in SQL both
SQLite and PostgreSQL run (``?`` placeholders, ``INSERT ... ON CONFLICT``, ``CASE``
instead of two-argument ``min``). What differs is the database under them:

* a folder vault: a SQLite file in the state dir (as ever);
* a vault whose storage has ``pg_transaction`` (the ``storage_postgres`` backend, found by
  duck typing: ``pg_storage``): tables in the vault's schema, so every replica shares
  them. ``PgDb`` opens its transactions on the storage's pooled connections and hands
  out ``PgConn``, which runs the shared SQL there: ``?`` becomes ``%s``, each of the
  store's table names its schema-qualified ``habitat_<name>`` (``translate``).

PostgreSQL's text holds no NUL character (SQLite's does): ``to_pg`` / ``from_pg`` write
it, and the private-use escape character itself, as two-character escapes, so any text
goes in and comes back as it was. ``PgConn`` applies them to every text argument and
every text it reads back (``escape=False``: the caller does it, e.g. inside ``jsonb``).

Writes are serialised as SQLite's ``BEGIN IMMEDIATE`` serialises them: a write
transaction first takes a transaction-level advisory lock of its store
(``pg_advisory_xact_lock``), so two replicas storing the same learning at once take
turns and the second reinforces the first's row. Reads take no lock. The tables are created (``ddl``) once per storage and process,
under the same lock. Errors are the storage's: an unreachable server is
``BackendUnavailable`` (exit 69).
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from echo_core import blake2b

__all__ = ["PgConn", "PgDb", "SqlConn", "from_pg", "lock_key", "pg_storage", "to_pg",
           "translate"]


def pg_storage(ctx: Any) -> Any | None:
    """``ctx``'s storage when it is a PostgreSQL vault (it has ``pg_transaction``), else
    None (a folder vault, or any other backend: the habitat keeps to the state dir)."""
    try:
        storage = getattr(ctx, "storage", None)
    except Exception:  # no storage could be made for the vault URL
        if getattr(getattr(ctx, "config", None), "scheme", "file") == "file":
            return None  # a folder that is not there yet: the habitat keeps to the state dir
        raise
    return storage if callable(getattr(storage, "pg_transaction", None)) else None


def lock_key(schema: str, store: str) -> int:
    """The advisory lock key of ``store``'s tables in ``schema`` (a signed 64-bit int)."""
    digest = blake2b(f"echo-memory habitat {store}\x1f{schema}".encode(),
                     digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@functools.lru_cache(maxsize=512)
def translate(sql: str, schema: str, tables: tuple[str, ...]) -> str:
    """``sql`` (SQLite's dialect as the stores write it) for PostgreSQL: ``%`` doubled,
    ``?`` -> ``%s``, ``group_concat(`` -> ``string_agg(``, and each word of ``tables``
    -> ``"schema".habitat_<word>``. The stores' SQL holds no ``?`` or table name inside
    a string literal."""
    out = sql.replace("%", "%%").replace("?", "%s")
    out = re.sub(r"\bgroup_concat\(", "string_agg(", out)
    if tables:
        names = "|".join(sorted(tables, key=len, reverse=True))
        out = re.sub(rf"(?<![.\w]){'(?:' + names + ')'}\b",
                     lambda m: f'"{schema}".habitat_{m.group(0)}', out)
    return out


#: The escape character of ``to_pg`` (private use: text seldom holds it).
_ESC = "\ue000"


def to_pg(text: str) -> str:
    """``text`` as PostgreSQL can store it: NUL -> ``_ESC`` ``0``, ``_ESC`` -> ``_ESC``
    ``1`` (``from_pg`` undoes it)."""
    if "\x00" not in text and _ESC not in text:
        return text
    return text.replace(_ESC, _ESC + "1").replace("\x00", _ESC + "0")


def from_pg(text: str) -> str:
    """The text ``to_pg`` stored."""
    if _ESC not in text:
        return text
    return text.replace(_ESC + "0", "\x00").replace(_ESC + "1", _ESC)


def _arg(value: Any) -> Any:
    if isinstance(value, str):
        return to_pg(value)
    if isinstance(value, list):
        return [to_pg(v) if isinstance(v, str) else v for v in value]
    return value


def _row(row: Any) -> Any:
    if row is None:
        return None
    return tuple(from_pg(v) if isinstance(v, str) else v for v in row)


class _Rows:
    """A psycopg cursor whose text values come back through ``from_pg``."""

    def __init__(self, cur: Any) -> None:
        self.cur = cur
        self.rowcount: int = cur.rowcount

    def fetchone(self) -> Any:
        return _row(self.cur.fetchone())

    def fetchall(self) -> list[Any]:
        return [_row(r) for r in self.cur.fetchall()]

    def __iter__(self) -> Iterator[Any]:
        return (_row(r) for r in self.cur)


class PgConn:
    """A psycopg connection inside a transaction, speaking the stores' SQL (``translate``);
    ``execute`` returns psycopg's cursor (``fetchone``, ``fetchall``, ``rowcount``,
    iteration)."""

    def __init__(self, conn: Any, schema: str, tables: tuple[str, ...], *,
                 escape: bool = True) -> None:
        self.conn = conn
        self.schema = schema
        self.tables = tables
        self.escape = escape

    def execute(self, sql: str, args: Sequence[Any] = (), /) -> Any:
        """Run one statement with ``args`` bound to its ``?``."""
        sql = translate(sql, self.schema, self.tables)
        if not self.escape:
            return self.conn.execute(sql, tuple(args))
        return _Rows(self.conn.execute(sql, tuple(_arg(a) for a in args)))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]], /) -> Any:
        """Run one statement once per row of ``rows``."""
        cur = self.conn.cursor()
        cur.executemany(translate(sql, self.schema, self.tables),
                        [tuple(_arg(a) for a in r) if self.escape else tuple(r)
                         for r in rows])
        return cur


#: (storage id, schema, store) whose tables this process made sure of.
_READY: set[tuple[int, str, str]] = set()
_READY_GUARD = threading.Lock()


class PgDb:
    """One habitat store's tables in a PostgreSQL vault (module docstring).

    ``store``: its name (the lock key, the version row); ``tables``: the table names its
    SQL uses; ``ddl(schema)``: the statements creating them (idempotent); ``version``:
    their layout (recorded in ``habitat_versions``). ``local_dir``: this machine's
    habitat folder, for what stays per machine (derived caches). ``escape``: whether
    its connections apply ``to_pg`` / ``from_pg``."""

    def __init__(self, storage: Any, *, store: str, tables: tuple[str, ...],
                 ddl: Any, version: int, local_dir: Path | None = None,
                 escape: bool = True) -> None:
        self.storage = storage
        self.schema = str(storage.schema)
        self.store = store
        self.tables = tables
        self.ddl = ddl
        self.version = version
        self.local_dir = local_dir
        self.escape = escape
        self.key = lock_key(self.schema, store)

    def _ensure(self, conn: Any) -> None:
        """Create the store's tables when this process has not yet (under the lock)."""
        mark = (id(self.storage), self.schema, self.store)
        if mark in _READY:
            return
        s = f'"{self.schema}"'
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (self.key,))
        conn.execute(f"CREATE TABLE IF NOT EXISTS {s}.habitat_versions "
                     "(store text PRIMARY KEY, version integer NOT NULL)")
        row = conn.execute(f"SELECT version FROM {s}.habitat_versions WHERE store = %s",
                           (self.store,)).fetchone()
        if row is None or int(row[0]) < self.version:
            for statement in self.ddl(s):
                conn.execute(statement)
            conn.execute(f"INSERT INTO {s}.habitat_versions VALUES (%s, %s) ON CONFLICT "
                         "(store) DO UPDATE SET version = excluded.version",
                         (self.store, self.version))
        elif int(row[0]) > self.version:
            from echo_core import EchoError, ExitCode

            raise EchoError(f"the habitat's {self.store} tables in schema {self.schema!r} "
                            f"are at version {row[0]}, newer than this echo-memory's "
                            f"{self.version}; upgrade echo-memory", ExitCode.NOT_CONFIGURED)
        with _READY_GUARD:
            _READY.add(mark)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[PgConn]:
        """A write transaction, serialised with every other writer of this store
        (committed when the block ends, rolled back when it raises)."""
        with self.storage.pg_transaction() as conn:
            self._ensure(conn)
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self.key,))
            yield PgConn(conn, self.schema, self.tables, escape=self.escape)

    @contextlib.contextmanager
    def reading(self) -> Iterator[PgConn]:
        """A transaction taking no lock: for reads, and for writes that need no turn
        (inserts keyed by a unique id)."""
        with self.storage.pg_transaction() as conn:
            self._ensure(conn)
            yield PgConn(conn, self.schema, self.tables, escape=self.escape)


class SqlConn(Protocol):
    """What the stores' SQL runs on: a ``sqlite3.Connection`` or a ``PgConn``."""

    def execute(self, sql: str, args: Any = ..., /) -> Any:
        """Run one statement."""

    def executemany(self, sql: str, rows: Any, /) -> Any:
        """Run one statement per row."""
