"""Where the record is read from and written to: the loom's day files, or the shared
table of a PostgreSQL vault.

``record_source(ctx)`` gives what every reader of the whole record uses (``days()``,
``records(days)``): the ``Loom`` in the state dir for a folder vault, ``PgRecords``
(``loom_pg``) for a vault whose storage has ``pg_transaction``. ``find_record`` and
``session_records`` answer by id and by session (the loom's index on a folder vault, an
indexed query on PostgreSQL). ``committer(ctx)`` is the process's group committer of
that record: day files and ``fsync`` (``group_commit``), or one PostgreSQL transaction
per group (``loom_pg.PgSink``), one per storage object and spool folder.
"""

from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path
from typing import Any

from plugins.habitat.group_commit import GroupCommitter, committer_for
from plugins.habitat.loom import Loom, RecordReader
from plugins.habitat.paths import habitat_dir, loom_dir
from plugins.habitat.pg_sql import pg_storage
from plugins.habitat.record import Record

__all__ = ["committer", "find_record", "pg_records", "record_source", "session_records"]


def pg_records(ctx: Any) -> Any | None:
    """The shared record (``loom_pg.PgRecords``) of a PostgreSQL vault, else None."""
    storage = pg_storage(ctx)
    if storage is None:
        return None
    from plugins.habitat.loom_pg import PgRecords

    return PgRecords(storage, loom_dir(ctx), habitat_dir(ctx))


def record_source(ctx: Any) -> RecordReader:
    """The whole record of ``ctx``'s vault, read as a ``Loom`` reads (module docstring)."""
    shared = pg_records(ctx)
    return Loom(loom_dir(ctx)) if shared is None else shared


def find_record(ctx: Any, record_id: str) -> Record | None:
    """The record ``record_id``, or None."""
    shared = pg_records(ctx)
    if shared is not None:
        found: Record | None = shared.get(record_id)
        return found
    from plugins.habitat.loom_open import index_for

    index = index_for(ctx)
    index.catch_up()
    located = index.locate_id(record_id)
    return None if located is None else index.read(located)


def session_records(ctx: Any, session_id: str) -> list[Record]:
    """Every record of ``session_id``, in record order."""
    shared = pg_records(ctx)
    if shared is not None:
        return list(shared.session(session_id))
    from plugins.habitat.loom_open import index_for

    index = index_for(ctx)
    index.catch_up()
    return [r for r in index.read_many(index.session_located(session_id)) if r is not None]


_PG_COMMITTERS: weakref.WeakKeyDictionary[Any, dict[Path, GroupCommitter]] = \
    weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


def committer(ctx: Any) -> GroupCommitter:
    """This process's group committer of ``ctx``'s record (module docstring)."""
    storage = pg_storage(ctx)
    if storage is None:
        return committer_for(loom_dir(ctx))
    from plugins.habitat.loom_pg import PgRecords, PgSink

    root = Path(os.path.abspath(loom_dir(ctx)))
    with _GUARD:
        mine = _PG_COMMITTERS.setdefault(storage, {})
        found = mine.get(root)
        if found is None:
            target = PgRecords(storage, root, habitat_dir(ctx))
            found = mine[root] = GroupCommitter(target.spool, sink=PgSink(target))
        return found


def _forget_after_fork() -> None:
    global _GUARD
    _PG_COMMITTERS.clear()
    _GUARD = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)
