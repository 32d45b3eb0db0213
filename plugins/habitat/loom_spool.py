"""Shipping this machine's spool into a PostgreSQL vault's record table.

On a PostgreSQL vault the loom's day files in the state dir (``<habitat>/loom/``) are a
spool: the hook recorder appends there (it runs without site-packages, so it cannot
reach the database), and so do writes made while the database is unreachable
(``loom_pg.PgSink``). ``ship`` sends what the table has not had yet:

* ``<habitat>/loom-shipped.json`` holds, per day file, the byte offset up to which its
  lines were sent (always a line end); each file is read from there, whole lines only
  (a torn tail is never sent: it was never acknowledged);
* each day's new records go in one transaction (``ON CONFLICT (id) DO NOTHING``), then
  the offset is saved (written to a temp file and renamed): killed in between, the lines
  are sent again and skipped by id, so a record is in the table once;
* a file shorter than its offset (replaced by hand) is sent again from its start;
* one shipper at a time per machine (``flock`` of ``<habitat>/loom-ship.lock``).

Nothing in the spool is changed or removed: it stays this machine's copy.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from plugins.habitat.loom import day_lines, parse_line

if TYPE_CHECKING:
    from plugins.habitat.loom_pg import PgRecords

__all__ = ["OFFSETS_NAME", "ship"]

OFFSETS_NAME = "loom-shipped.json"
_LOCK_NAME = "loom-ship.lock"
#: Most records sent in one transaction.
_CHUNK = 5000


@contextlib.contextmanager
def _locked(habitat: Path) -> Iterator[None]:
    habitat.mkdir(parents=True, exist_ok=True)
    fd = os.open(habitat / _LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _offsets(habitat: Path) -> dict[str, int]:
    try:
        data = json.loads((habitat / OFFSETS_NAME).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _save(habitat: Path, offsets: dict[str, int]) -> None:
    temp = habitat / f"{OFFSETS_NAME}.{os.getpid()}.tmp"
    temp.write_text(json.dumps(offsets, sort_keys=True), "utf-8")
    os.replace(temp, habitat / OFFSETS_NAME)


def _behind(target: PgRecords, offsets: dict[str, int]) -> list[tuple[str, int]]:
    """``(day, offset to send from)`` of every day file with lines not sent."""
    out = []
    for day in target.spool.days():
        try:
            size = os.stat(target.spool.day_file(day)).st_size
        except FileNotFoundError:
            continue
        sent = offsets.get(day, 0)
        if size != sent:
            out.append((day, 0 if size < sent else sent))
    return out


def ship(target: PgRecords) -> int:
    """Send the spool's unsent records to ``target``'s table (module docstring); the
    number of lines read. Raises ``BackendUnavailable`` when the database is
    unreachable (what was sent before stays sent)."""
    if not target.spool.root.is_dir():
        return 0
    offsets = _offsets(target.habitat)
    if not _behind(target, offsets):
        return 0
    sent = 0
    with _locked(target.habitat):
        offsets = _offsets(target.habitat)
        for day, start in _behind(target, offsets):
            batch = []
            end = start
            for end, line in day_lines(target.spool.day_file(day), start):
                record = parse_line(line)
                if record is not None:
                    batch.append(record)
                sent += 1
                if len(batch) >= _CHUNK:
                    target.insert(batch)
                    batch = []
            target.insert(batch)
            offsets[day] = end
            _save(target.habitat, offsets)
    return sent
