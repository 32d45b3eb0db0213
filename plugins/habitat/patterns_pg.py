"""The pattern registry's tables in a PostgreSQL vault (``pg_sql``, ``patterns``).

The SQLite file's tables (``patterns._SCHEMA``), named ``habitat_<name>`` in the vault's
schema: ``patterns``, ``occurrences``, ``evidence``, ``transitions`` (with a ``rowid``
sequence: the order of the moves) and ``batches``. Text columns compare byte-wise
(``COLLATE "C"``), as SQLite's do, so the orders the registry reports are the same.
"""

from __future__ import annotations

from typing import Any

from plugins.habitat.pg_sql import PgDb

__all__ = ["PATTERN_TABLES", "VERSION", "patterns_db"]

VERSION = 1
PATTERN_TABLES = ("patterns", "occurrences", "evidence", "transitions", "batches")
_T = 'text COLLATE "C" NOT NULL'


def _ddl(s: str) -> list[str]:
    return [
        f"""CREATE TABLE IF NOT EXISTS {s}.habitat_patterns (
            id text COLLATE "C" PRIMARY KEY, signature text COLLATE "C" NOT NULL UNIQUE,
            kind {_T}, title {_T}, severity {_T}, status {_T}, first_seen {_T},
            last_seen {_T}, recurrence integer NOT NULL, flags integer NOT NULL DEFAULT 0,
            fix text NOT NULL DEFAULT '', fix_outcome text NOT NULL DEFAULT '',
            updated {_T})""",
        f"""CREATE TABLE IF NOT EXISTS {s}.habitat_occurrences (
            key text COLLATE "C" PRIMARY KEY, pattern_id {_T}, kind {_T}, session_id {_T},
            agent_id {_T}, first_ts {_T}, last_ts {_T}, summary {_T}, severity {_T},
            batch_id {_T}, found {_T})""",
        (f"CREATE INDEX IF NOT EXISTS habitat_occurrences_batch ON {s}.habitat_occurrences "
        "(batch_id)"),
        (f"CREATE INDEX IF NOT EXISTS habitat_occurrences_pattern ON "
        f"{s}.habitat_occurrences (pattern_id, severity)"),
        f"""CREATE TABLE IF NOT EXISTS {s}.habitat_evidence (
            pattern_id {_T}, record_id {_T}, occurrence {_T}, role {_T},
            PRIMARY KEY (pattern_id, record_id))""",
        (f"CREATE INDEX IF NOT EXISTS habitat_evidence_record ON {s}.habitat_evidence "
        "(record_id)"),
        f"""CREATE TABLE IF NOT EXISTS {s}.habitat_transitions (
            pattern_id {_T}, from_status {_T}, to_status {_T}, at {_T}, by {_T},
            note {_T}, rowid bigserial PRIMARY KEY)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.habitat_batches (
            id text COLLATE "C" PRIMARY KEY, created {_T}, size integer NOT NULL)""",
    ]


def patterns_db(storage: Any) -> PgDb:
    """The registry's tables of the PostgreSQL vault ``storage``."""
    return PgDb(storage, store="patterns", tables=PATTERN_TABLES, ddl=_ddl, version=VERSION)
