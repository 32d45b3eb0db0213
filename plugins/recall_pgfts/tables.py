"""The tables of the ``pgfts`` index, created and migrated by the plugin in the vault's
schema (beside ``storage_postgres``'s own tables, which it never touches).

* ``echo_fts(path, tsv, weight, updated)``: one row per indexed note: its ``tsvector``
  (``lexemes``), the static prior ``IndexDoc.weight`` and the ``updated`` date as a day
  ordinal (``date.toordinal()``, 0 = unknown). ``path`` is the primary key in the
  ``"C"`` collation (ties in a search are broken by it in code-point order); a GIN index
  on ``tsv`` answers ``tsv @@ query``.
* ``echo_fts_meta``: one row: ``version`` (``VERSION`` of the tables), ``tokenizer``
  (the tokenizer the lexemes came from), ``docs`` (rows of ``echo_fts``, kept in the
  same transaction as every change: the N of idf without a count), ``built`` (a full
  rebuild has run), ``md_seen`` (the ``.md`` files the vault listed at the last rebuild,
  so an empty index over a vault whose notes are all outside the corpus is not rebuilt
  again and again).

``ensure_tables`` makes them exist at ``VERSION`` under a transaction-level advisory
lock (two processes opening a new vault at once do not race). Tables of another version
are dropped and created empty (``built`` false): the ranker then asks for a rebuild.
"""

from __future__ import annotations

from typing import Any

from echo_core import blake2b

#: The layout of the tables this plugin writes and reads.
VERSION = 1
FTS = "echo_fts"
META = "echo_fts_meta"


def lock_key(schema: str) -> int:
    """The advisory lock key guarding the creation of ``schema``'s ``pgfts`` tables."""
    digest = blake2b(f"echo-memory pgfts\x1f{schema}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _exists(conn: Any, schema: str, table: str) -> bool:
    row = conn.execute("SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = %s "
                       "AND tablename = %s", (schema, table)).fetchone()
    return row is not None


def _version(conn: Any, schema: str, s: str) -> int | None:
    if not _exists(conn, schema, META):
        return None
    row = conn.execute(f"SELECT version FROM {s}.{META}").fetchone()
    return int(row[0]) if row else 0


def ensure_tables(conn: Any, schema: str, tokenizer: str) -> None:
    """Create (or recreate, when of another ``VERSION``) the tables in ``schema`` inside
    the caller's transaction."""
    s = f'"{schema}"'
    if _version(conn, schema, s) == VERSION:
        return
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(schema),))
    if _version(conn, schema, s) == VERSION:
        return
    conn.execute(f"DROP TABLE IF EXISTS {s}.{FTS}, {s}.{META}")
    conn.execute(f"""CREATE TABLE {s}.{FTS} (
        path text COLLATE "C" PRIMARY KEY,
        tsv tsvector NOT NULL,
        weight double precision NOT NULL,
        updated integer NOT NULL)""")
    conn.execute(f"CREATE INDEX {FTS}_tsv ON {s}.{FTS} USING gin (tsv)")
    conn.execute(f"""CREATE TABLE {s}.{META} (
        one boolean PRIMARY KEY DEFAULT true CHECK (one),
        version integer NOT NULL,
        tokenizer text NOT NULL,
        docs bigint NOT NULL,
        built boolean NOT NULL,
        md_seen bigint NOT NULL)""")
    conn.execute(f"INSERT INTO {s}.{META} VALUES (true, %s, %s, 0, false, 0)",
                 (VERSION, tokenizer))
