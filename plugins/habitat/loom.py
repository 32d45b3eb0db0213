"""The loom: the habitat's append-only record, one JSON-lines file per day.

``<state_dir>/habitat/loom/YYYY-MM-DD.jsonl`` holds the records whose ``ts`` falls on
that day, in the order they were appended. The files are the record: never edited,
never rewritten (folding adds a ``fold`` record; nothing is deleted).

Append (``Loom.append``, ``loom_file.append_lines``): under an exclusive ``flock`` of
the day file, the records' lines are written with one ``write`` and ``fsync``-ed before
``append`` returns, so a record is durable before it is acknowledged. A writer killed
mid-write leaves at most a torn tail without its ``\\n``: it was never acknowledged,
readers skip it, and the next append cuts it off first, so every line a day file keeps
is whole. Any process may append (a hook process, the MCP server, the CLI): the lock
orders them. The MCP server's concurrent calls share one write and one ``fsync``
(``group_commit``).

Read (``Loom.records``, ``read_day_file``, ``day_lines``): the day files in order, each
line parsed; a line that is not a record (torn, hand-damaged) is skipped, never fatal.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

from plugins.habitat.loom_file import append_lines
from plugins.habitat.record import Record

__all__ = ["LOOM_DIR", "Loom", "RecordReader", "day_lines", "parse_line", "read_day_file"]

#: The loom's folder under the habitat's state folder.
LOOM_DIR = "loom"


class RecordReader(Protocol):
    """What readers of the whole record use: a ``Loom``, or a PostgreSQL vault's shared
    record (``loom_pg.PgRecords``)."""

    def days(self) -> list[str]:
        """The days holding records, oldest first."""

    def records(self, days: Sequence[str] | None = None) -> Iterator[Record]:
        """Every record of ``days`` (default: all), day by day, in record order."""


class Loom:
    """The day files under ``root`` (created on first append)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def day_file(self, day: str) -> Path:
        """The file of one day (``YYYY-MM-DD``)."""
        return self.root / f"{day}.jsonl"

    def days(self) -> list[str]:
        """The days that have a file, oldest first."""
        try:
            names = os.listdir(self.root)
        except FileNotFoundError:
            return []
        return sorted(n[:-6] for n in names if n.endswith(".jsonl") and len(n) == 16)

    def append(self, records: Sequence[Record]) -> None:
        """Write ``records`` durably (see the module docstring), grouped by day, in the
        given order; returns once every one is on disk."""
        by_day: dict[str, list[bytes]] = {}
        for record in records:
            by_day.setdefault(record.day, []).append(record.to_line())
        if not by_day:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        for day, lines in by_day.items():
            append_lines(self.day_file(day), b"".join(lines))

    def records(self, days: Sequence[str] | None = None) -> Iterator[Record]:
        """Every readable record of ``days`` (default: all), in file order."""
        for day in self.days() if days is None else days:
            yield from read_day_file(self.day_file(day))


def day_lines(path: Path, offset: int = 0) -> Iterator[tuple[int, bytes]]:
    """``(end offset, line)`` of every whole line of a day file from byte ``offset`` (a
    line start) on; a torn tail (no ``\\n``) is not yielded. Nothing when it is absent."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below; a generator holds it
    except FileNotFoundError:
        return
    with f:
        f.seek(offset)
        position = offset
        for line in f:
            if not line.endswith(b"\n"):
                return  # torn: never acknowledged
            position += len(line)
            yield position, line


def parse_line(line: bytes) -> Record | None:
    """The record one line holds, or None for a line that is not one."""
    try:
        return Record.from_json(json.loads(line))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def read_day_file(path: Path) -> Iterator[Record]:
    """The records of one day file, in order; unreadable lines are skipped."""
    for _, line in day_lines(path):
        record = parse_line(line)
        if record is not None:
            yield record
