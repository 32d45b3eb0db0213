"""The learnings store's tables in a PostgreSQL vault (``pg_sql``), and their search.

The same tables as the SQLite file (``learnings_schema``), named ``habitat_<name>`` in
the vault's schema: ``learnings``, ``learning_tokens``, ``provenance``,
``state_changes`` (with a ``rowid`` sequence: the order changes were made) and
``learning_fts``, a plain table here whose ``tsv`` column is generated from content and
tags (``to_tsvector('english', ...)``: Snowball stemming, as FTS5's Porter stemmer, so
"deploying" finds "deploy") with a GIN index. The insight ranker's ``insight_index``
describes this machine's ranker files, so it stays in the state dir
(``LearningStore.local``).

``VERSION`` (``habitat_versions``): 1, the first; 2 added ``learnings.project``. Tables of
an older version are brought up to date when a process first uses them (``PgDb`` runs
the statements again: each is idempotent, ``ADD COLUMN IF NOT EXISTS`` the migration).

``pg_learning_hits`` is ``learning_search.learning_hits`` over these tables: each query
word optional (the words' ``plainto_tsquery`` OR-ed), ranked by ``ts_rank`` (> 0).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugins.habitat.learning_hit_rows import HIT_COLUMNS, hit_of, with_filters
from plugins.habitat.pg_sql import PgDb

__all__ = ["LEARNING_TABLES", "VERSION", "learnings_db", "pg_learning_hits"]

VERSION = 2
LEARNING_TABLES = ("learnings", "learning_tokens", "provenance", "state_changes",
                   "learning_fts")
_C = 'COLLATE "C"'


def _ddl(s: str) -> list[str]:
    return [
        f"""CREATE TABLE IF NOT EXISTS {s}.habitat_learnings (
            id text {_C} PRIMARY KEY, content text NOT NULL, compact text {_C} NOT NULL,
            words text NOT NULL, type text {_C} NOT NULL, tags text NOT NULL,
            state text {_C} NOT NULL, recurrence integer NOT NULL,
            agent_id text {_C} NOT NULL, session_id text {_C} NOT NULL,
            rationale text NOT NULL, created text {_C} NOT NULL,
            updated text {_C} NOT NULL, last_seen text {_C} NOT NULL,
            decided text {_C} NOT NULL DEFAULT '',
            decided_recurrence integer NOT NULL DEFAULT 0,
            reason text NOT NULL DEFAULT '', insight_path text,
            note_status text NOT NULL DEFAULT '', project text NOT NULL DEFAULT '')""",
        (f"ALTER TABLE {s}.habitat_learnings ADD COLUMN IF NOT EXISTS project text NOT NULL "
         "DEFAULT ''"),
        (f"CREATE INDEX IF NOT EXISTS habitat_learnings_compact ON {s}.habitat_learnings "
        "(compact)"),
        (f"CREATE INDEX IF NOT EXISTS habitat_learnings_state ON {s}.habitat_learnings "
        "(state, last_seen)"),
        f"""CREATE TABLE IF NOT EXISTS {s}.habitat_learning_tokens (
            token text {_C} NOT NULL, learning_id text {_C} NOT NULL,
            PRIMARY KEY (token, learning_id))""",
        f"""CREATE TABLE IF NOT EXISTS {s}.habitat_provenance (
            learning_id text {_C} NOT NULL, seq integer NOT NULL, ts text {_C} NOT NULL,
            agent_id text {_C} NOT NULL, session_id text {_C} NOT NULL,
            rationale text NOT NULL, content text NOT NULL,
            PRIMARY KEY (learning_id, seq))""",
        (f"CREATE INDEX IF NOT EXISTS habitat_provenance_agent ON {s}.habitat_provenance "
        "(agent_id, learning_id)"),
        f"""CREATE TABLE IF NOT EXISTS {s}.habitat_state_changes (
            learning_id text {_C} NOT NULL, ts text {_C} NOT NULL, before text NOT NULL,
            after text NOT NULL, why text NOT NULL, rowid bigserial PRIMARY KEY)""",
        (f"CREATE INDEX IF NOT EXISTS habitat_state_changes_learning ON "
        f"{s}.habitat_state_changes (learning_id)"),
        f"""CREATE TABLE IF NOT EXISTS {s}.habitat_learning_fts (
            id text {_C} PRIMARY KEY, content text NOT NULL, tags text NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (
                to_tsvector('english'::regconfig, content || ' ' || tags)) STORED)""",
        (f"CREATE INDEX IF NOT EXISTS habitat_learning_fts_tsv ON {s}.habitat_learning_fts "
        "USING gin (tsv)"),
    ]


def learnings_db(storage: Any, local_dir: Path) -> PgDb:
    """The learnings tables of the PostgreSQL vault ``storage`` (``local_dir``: this
    machine's habitat folder)."""
    return PgDb(storage, store="learnings", tables=LEARNING_TABLES, ddl=_ddl,
                version=VERSION, local_dir=local_dir)


def pg_learning_hits(db: PgDb, words: list[str], limit: int, *, agent_id: str | None,
                     since: str | None) -> list[dict[str, Any]]:
    """``learning_hits`` on PostgreSQL (module docstring) for the query's ``words``."""
    query = " || ".join(["plainto_tsquery('english'::regconfig, ?)"] * len(words))
    sql = (f"SELECT {HIT_COLUMNS}, ts_rank(f.tsv, q.q) AS rank FROM learning_fts f "
           "JOIN learnings l ON l.id = f.id"
           f" CROSS JOIN (SELECT {query} AS q) q WHERE f.tsv @@ q.q")
    args: list[Any] = list(words)
    sql = with_filters(sql, args, agent_id=agent_id, since=since)
    sql += " ORDER BY rank DESC, l.id LIMIT ?"
    args.append(limit)
    with db.reading() as conn:
        rows = conn.execute(sql, args).fetchall()
    return [hit_of(r, max(float(r[12]), 1e-9)) for r in rows]
