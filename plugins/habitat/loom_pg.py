"""The record on a PostgreSQL vault: one table every replica appends to and reads.

``habitat_records`` in the vault's schema: one row per record — ``seq`` (the order rows
were inserted), ``id`` (unique: a record inserted twice is kept once), its day, time,
kind, agent, session, parent and error flag as columns, the whole record as ``data``
(``jsonb``, ``Record.to_json``), and ``tsv``, generated from text (weight B), result (D)
and tags (A) with ``to_tsvector('english', ...)`` (GIN index), for ``loom_pg_search``.

``PgRecords`` is what ``record_source`` gives for such a vault; it reads as a ``Loom``
does (``days``, ``records(days)``: a day's records in time order, then insertion order)
and finds a record by id or a session's records. Text goes through ``pg_sql.to_pg``
(a NUL in a record is kept, not refused). Before it reads, what this machine's
spool holds that the table does not is shipped (``loom_spool``): the hook recorder's
records (it cannot reach the database) and any queued during an outage.

Writes (``PgRecords.insert``, the group committer's sink ``PgSink``): one transaction per
group, ``INSERT ... ON CONFLICT (id) DO NOTHING``. Acknowledged once committed: a writer
killed before that committed nothing, and a row is whole or absent. The database
unreachable (``BackendUnavailable``): the group goes to the local spool instead (fsync-ed
day files, as on a folder vault) and is reported ``queued``; the next write or read that
reaches the database ships it, once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from plugins.habitat.loom import Loom
from plugins.habitat.pg_sql import PgDb, from_pg, to_pg
from plugins.habitat.record import Record

__all__ = ["RECORD_TABLES", "PgRecords", "PgSink", "record_of", "records_db"]

VERSION = 1
RECORD_TABLES = ("records",)
_T = 'text COLLATE "C"'


def _ddl(s: str) -> list[str]:
    return [
        f"""CREATE TABLE IF NOT EXISTS {s}.habitat_records (
            seq bigserial PRIMARY KEY, id {_T} NOT NULL UNIQUE, day {_T} NOT NULL,
            ts {_T} NOT NULL, kind {_T} NOT NULL, agent_id {_T} NOT NULL,
            session_id {_T} NOT NULL, parent_id {_T}, is_error boolean NOT NULL,
            tags text NOT NULL, data jsonb NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('english'::regconfig, coalesce(data->>'text', '')), 'B')
                || setweight(to_tsvector('english'::regconfig,
                                         coalesce(data->>'result', '')), 'D')
                || setweight(to_tsvector('english'::regconfig, tags), 'A')) STORED)""",
        f"CREATE INDEX IF NOT EXISTS habitat_records_day ON {s}.habitat_records (day, ts, seq)",
        (f"CREATE INDEX IF NOT EXISTS habitat_records_session ON {s}.habitat_records "
        "(session_id, ts, seq)"),
        f"CREATE INDEX IF NOT EXISTS habitat_records_tsv ON {s}.habitat_records USING gin (tsv)",
    ]


def records_db(storage: Any) -> PgDb:
    """The record table of the PostgreSQL vault ``storage``."""
    return PgDb(storage, store="records", tables=RECORD_TABLES, ddl=_ddl, version=VERSION,
                escape=False)


_INSERT = ("INSERT INTO records (id, day, ts, kind, agent_id, session_id, parent_id, "
           "is_error, tags, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb) "
           "ON CONFLICT (id) DO NOTHING")
_ORDER = "ORDER BY ts, seq"


def _deep(value: Any, text: Any) -> Any:
    """``value`` (a record's JSON) with ``text`` applied to every string in it."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, list):
        return [_deep(v, text) for v in value]
    if isinstance(value, dict):
        return {k: _deep(v, text) for k, v in value.items()}
    return value


def _row(record: Record) -> tuple[Any, ...]:
    """The columns of ``record``'s row (text through ``to_pg``: a NUL is kept)."""
    parent = None if record.parent_id is None else to_pg(record.parent_id)
    return (to_pg(record.id), record.day, record.ts, to_pg(record.kind),
            to_pg(record.agent_id), to_pg(record.session_id), parent, record.is_error,
            to_pg(" ".join(record.tags)),
            json.dumps(_deep(record.to_json(), to_pg), ensure_ascii=False))


def record_of(data: Any) -> Record:
    """The record a row's ``data`` holds."""
    return Record.from_json(_deep(data if isinstance(data, dict) else json.loads(data),
                                  from_pg))


class PgRecords:
    """The shared record of a PostgreSQL vault (module docstring); ``spool``: this
    machine's loom folder, ``habitat``: its habitat folder (the spool's offsets)."""

    def __init__(self, storage: Any, spool: Path, habitat: Path) -> None:
        self.db = records_db(storage)
        self.spool = Loom(spool)
        self.habitat = habitat
        self._shipped = False

    def ship(self) -> int:
        """Ship the spool's records the table lacks (``loom_spool.ship``); how many lines
        were sent. ``BackendUnavailable`` when the database is unreachable."""
        from plugins.habitat.loom_spool import ship

        sent = ship(self)
        self._shipped = True
        return sent

    def _fresh(self) -> None:
        if not self._shipped:
            self.ship()

    def insert(self, records: Sequence[Record]) -> None:
        """Insert ``records`` in one transaction (a record already there is skipped)."""
        if not records:
            return
        with self.db.reading() as conn:
            conn.executemany(_INSERT, [_row(r) for r in records])

    # -- the Loom's reads ----------------------------------------------------------------

    def days(self) -> list[str]:
        """The days holding a record, oldest first."""
        self._fresh()
        with self.db.reading() as conn:
            return [str(r[0]) for r in conn.execute(
                "SELECT DISTINCT day FROM records ORDER BY day").fetchall()]

    def records(self, days: Sequence[str] | None = None) -> Iterator[Record]:
        """Every record of ``days`` (default: all), day by day, in time order."""
        self._fresh()
        with self.db.reading() as conn:
            if days is None:
                rows = conn.execute("SELECT data FROM records ORDER BY day, ts, seq")
            else:
                rows = conn.execute("SELECT data FROM records WHERE day = ANY(?) "
                                    "ORDER BY day, ts, seq", (list(days),))
            found = [record_of(r[0]) for r in rows.fetchall()]
        yield from found

    def get(self, record_id: str) -> Record | None:
        """The record ``record_id``, or None."""
        self._fresh()
        with self.db.reading() as conn:
            row = conn.execute("SELECT data FROM records WHERE id = ?",
                               (to_pg(record_id),)).fetchone()
        return None if row is None else record_of(row[0])

    def session(self, session_id: str) -> list[Record]:
        """Every record of ``session_id``, in time order."""
        self._fresh()
        with self.db.reading() as conn:
            rows = conn.execute(f"SELECT data FROM records WHERE session_id = ? {_ORDER}",
                                (to_pg(session_id),)).fetchall()
        return [record_of(r[0]) for r in rows]


class PgSink:
    """The group committer's sink for a PostgreSQL vault (module docstring)."""

    def __init__(self, records: PgRecords) -> None:
        self.target = records

    def __call__(self, records: list[Record]) -> bool:
        """Commit ``records`` (the spool shipped first, so the order holds); True when
        the database was unreachable and they were queued in the spool instead."""
        from echo_core import BackendUnavailable

        try:
            self.target.ship()
            self.target.insert(records)
        except BackendUnavailable:
            self.target.spool.append(records)
            return True
        return False
