"""The loom: the habitat's append-only record, one JSON-lines file per day.

``<state_dir>/habitat/loom/YYYY-MM-DD.jsonl`` holds the records whose ``ts`` falls on
that day, in the order they were appended. The files are the record: never edited,
never rewritten (folding adds a ``fold`` record; nothing is deleted).

Append (``Loom.append``): under an exclusive ``flock`` of the day file, the records'
lines are written with one ``write`` and ``fsync``-ed before ``append`` returns, so a
record is durable before it is acknowledged. A writer killed mid-write leaves at most
a torn last line without its ``\\n``: it was never acknowledged, readers skip it, and
the next append starts a new line first, so it tears nothing else. Any process may
append (a hook process, the MCP server, the CLI): the lock orders them.

Read (``Loom.records``): the day files in order, each line parsed; a line that is not a
record (torn, hand-damaged) is skipped, never fatal.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from plugins.habitat.record import Record

__all__ = ["LOOM_DIR", "Loom"]

#: The loom's folder under the habitat's state folder.
LOOM_DIR = "loom"


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
            _append_lines(self.day_file(day), b"".join(lines))

    def records(self, days: Sequence[str] | None = None) -> Iterator[Record]:
        """Every readable record of ``days`` (default: all), in file order."""
        for day in self.days() if days is None else days:
            yield from read_day_file(self.day_file(day))


def _append_lines(path: Path, data: bytes) -> None:
    """Append ``data`` (whole lines) to ``path`` under its lock, after a newline if a
    torn line ends the file; fsync before returning."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # a writer died mid-line: that line stays torn, alone
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock


def read_day_file(path: Path) -> Iterator[Record]:
    """The records of one day file, in order; unreadable lines are skipped."""
    try:
        with open(path, "rb") as f:
            for line in f:
                if not line.endswith(b"\n"):
                    continue  # torn: never acknowledged
                try:
                    yield Record.from_json(json.loads(line))
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue
    except FileNotFoundError:
        return
