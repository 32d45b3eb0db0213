"""The tables of a PostgreSQL vault, created and migrated by the plugin.

All of them live in the vault's schema (``?schema=``, default ``echo_memory``):

* ``echo_schema_version(version)``: one row, the migration level reached.
* ``echo_files(path, data, size, mtime, sha256, seq)``: every file of the vault, its
  exact bytes (``bytea``: text is stored as its UTF-8 bytes, line endings and all, and an
  attachment as the bytes it is), size in bytes, modification time (epoch seconds, the
  server's clock), SHA-256 of the bytes and the change ``seq`` that last wrote it.
  ``path`` is the primary key in the ``"C"`` collation, so a folder's files are one
  range scan of the index (``path >= 'dir/' AND path < 'dir0'``) in code-point order.
* ``echo_changes(seq, path, op, at)``: the change log, one row per write (``op`` ``w``)
  or delete (``d``). ``seq`` comes from the one-row ``echo_change_counter``, bumped
  inside the writing transaction: the row lock it takes is held until commit, so change
  numbers are gapless and commit in order — a reader that has seen ``seq`` N has seen
  every change up to N (what a replica's catch-up after a reconnect relies on).
  Every committing write also sends ``NOTIFY`` on the vault's channel (``channel``)
  with the new ``seq`` as payload, in the same transaction.

``ensure_schema`` brings a schema to ``LATEST``, under a transaction-level advisory lock
so two processes opening a new vault at once do not race; a schema from a newer version
of the plugin is refused (exit 78) rather than misread.
"""

from __future__ import annotations

from typing import Any

from echo_core import EchoError, ExitCode, blake2b

#: The migration level this plugin writes and reads.
LATEST = 1
#: The NOTIFY channel of the default schema; another schema's is ``echo_changes:<name>``.
CHANNEL = "echo_changes"


def channel(schema: str, default_schema: str) -> str:
    """The NOTIFY channel carrying the change numbers of ``schema``."""
    return CHANNEL if schema == default_schema else f"{CHANNEL}:{schema}"


def advisory_key(*parts: str) -> int:
    """A signed 64-bit advisory lock key for ``parts`` (stable across processes)."""
    digest = blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _migrations(s: str) -> dict[int, list[str]]:
    """SQL of each migration level for the quoted schema ``s``."""
    return {
        1: [
            f"""CREATE TABLE {s}.echo_files (
                path text COLLATE "C" PRIMARY KEY,
                data bytea NOT NULL,
                size bigint NOT NULL,
                mtime double precision NOT NULL,
                sha256 bytea NOT NULL,
                seq bigint NOT NULL)""",
            f"""CREATE TABLE {s}.echo_changes (
                seq bigint PRIMARY KEY,
                path text COLLATE "C" NOT NULL,
                op char(1) NOT NULL CHECK (op IN ('w', 'd')),
                at timestamptz NOT NULL DEFAULT now())""",
            f"""CREATE TABLE {s}.echo_change_counter (
                one boolean PRIMARY KEY DEFAULT true CHECK (one),
                last bigint NOT NULL)""",
            f"INSERT INTO {s}.echo_change_counter (one, last) VALUES (true, 0)",
        ],
    }


def _version(conn: Any, schema: str, s: str) -> int | None:
    """The schema's migration level, None when it has no version table yet."""
    found = conn.execute(
        "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = %s "
        "AND tablename = 'echo_schema_version'", (schema,)).fetchone()
    if found is None:
        return None
    row = conn.execute(f"SELECT max(version) FROM {s}.echo_schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _too_new(schema: str, version: int) -> EchoError:
    return EchoError(
        f"the PostgreSQL vault schema {schema!r} is at version {version}, newer than this "
        f"echo-memory understands ({LATEST}); upgrade echo-memory on this machine",
        ExitCode.NOT_CONFIGURED,
    )


def ensure_schema(conn: Any, schema: str) -> bool:
    """Create or migrate the vault's tables in ``schema`` inside the caller's
    transaction; True when anything was created. 78 for a schema newer than ``LATEST``."""
    s = f'"{schema}"'
    version = _version(conn, schema, s)
    if version == LATEST:
        return False
    if version is not None and version > LATEST:
        raise _too_new(schema, version)
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key("echo-memory schema", schema),))
    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
    conn.execute(f"CREATE TABLE IF NOT EXISTS {s}.echo_schema_version (version integer NOT NULL)")
    version = _version(conn, schema, s) or 0
    if version > LATEST:
        raise _too_new(schema, version)
    for level in range(version + 1, LATEST + 1):
        for statement in _migrations(s)[level]:
            conn.execute(statement)
    conn.execute(f"DELETE FROM {s}.echo_schema_version")
    conn.execute(f"INSERT INTO {s}.echo_schema_version (version) VALUES (%s)", (LATEST,))
    return version < LATEST
