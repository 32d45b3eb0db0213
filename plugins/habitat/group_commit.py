"""Group commit: concurrent appends to one loom in one process share a write and an fsync.

The MCP server runs each ``habitat_record`` call in a worker thread; an ``fsync`` per
call would cap the server at one call per disk flush. ``GroupCommitter.append`` instead
queues the call's records and waits: the first waiting thread becomes the leader, takes
every queued batch, appends them to each day file with one ``loom_file.append_lines``
(one write, one ``fsync``) and wakes the others; batches queued meanwhile go with the
next leader. No thread of its own (nothing to start or stop), and the order of the
batches in the file is the order they were queued.

Durability is the loom's: ``append`` returns only once its records are on disk, so an
acknowledged record is in the day file, never only in the server's memory; a process
killed before that never acknowledged them (see ``loom_file`` for what a kill leaves).
A write that fails fails every batch that had records in that day file (``OSError``
raised in each caller) and acknowledges none of them.

``committer_for(root)`` gives the process's one committer per loom folder (a fork's
child starts with none: the parent's threads are not in it).

Another sink (``GroupCommitter(loom, sink=...)``; ``loom_pg``: a PostgreSQL vault's
record table): the leader hands the whole group's records, in queue order, to
``sink(records)`` once — one transaction per group —, and every batch of the group
shares its outcome: acknowledged, ``queued`` (the sink kept them in the local spool,
the database being unreachable; ``append`` returns True) or its error.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from plugins.habitat.loom import Loom
from plugins.habitat.loom_file import append_lines
from plugins.habitat.record import Record

__all__ = ["GroupCommitter", "committer_for"]


class _Batch:
    """One caller's records, and what became of them. ``wake`` is held until the batch is
    done or its caller is handed the leader's role (then it is not ``done``)."""

    __slots__ = ("done", "error", "lines", "queued", "records", "wake")

    def __init__(self, records: Sequence[Record], *, lines: bool = True) -> None:
        self.records = list(records)
        self.lines: dict[str, list[bytes]] = {}
        for record in records:
            self.lines.setdefault(record.day, []).append(record.to_line() if lines else b"")
        self.queued = False
        self.done = False
        self.error: BaseException | None = None
        self.wake = threading.Lock()
        self.wake.acquire()


class GroupCommitter:
    """Appends to ``loom`` shared between threads (see the module docstring).
    ``commits`` counts the writes made, ``batches`` the calls served (their ratio is the
    grouping achieved).

    Each waiting caller is woken once, by its own lock: when its batch is on disk, or
    when the leader hands it the leader's role (the leader writes until its own batch is
    done, then passes the role to the oldest queued batch, so no caller leads forever
    under steady load and no write wakes every waiting thread)."""

    def __init__(self, loom: Loom, sink: Callable[[list[Record]], bool] | None = None) -> None:
        self.loom = loom
        self.sink = sink
        self._lock = threading.Lock()
        self._queue: list[_Batch] = []
        self._leading = False
        self._folder_made = False
        self.commits = 0
        self.batches = 0

    def append(self, records: Sequence[Record]) -> bool:
        """Write ``records`` durably, in order, sharing the write with concurrent
        callers; returns once they are on disk (or committed by the sink): True when the
        sink only queued them. Raises ``OSError`` (or the sink's error) when the write
        failed (none of them acknowledged)."""
        if not records:
            return False
        batch = _Batch(records, lines=self.sink is None)
        with self._lock:
            self._queue.append(batch)
            follow = self._leading
            self._leading = True
        if follow:
            batch.wake.acquire()  # done, or handed the leader's role
        if not batch.done:
            self._lead(batch)
        if batch.error is not None:
            raise batch.error
        return batch.queued

    def _lead(self, own: _Batch) -> None:
        """Write queued groups until ``own`` is done, then hand the role on."""
        while not own.done:
            with self._lock:
                group, self._queue = self._queue, []
            self._finish(group, self._write(group))
        with self._lock:
            if self._queue:
                self._queue[0].wake.release()  # the oldest waiter leads next
            else:
                self._leading = False

    def _write(self, group: list[_Batch]) -> dict[str, BaseException]:
        """Append the group's lines, one write per day file (or hand its records to the
        sink at once); the days that failed."""
        if self.sink is not None:
            return self._sink(group)
        by_day: dict[str, list[bytes]] = {}
        for batch in group:
            for day, lines in batch.lines.items():
                by_day.setdefault(day, []).extend(lines)
        failed: dict[str, BaseException] = {}
        for day, lines in by_day.items():
            try:
                self._append(day, b"".join(lines))
            except BaseException as exc:  # noqa: BLE001 - handed to every waiting caller
                failed[day] = exc
        return failed

    def _sink(self, group: list[_Batch]) -> dict[str, BaseException]:
        """The group's records to the sink in one call; every day failed when it raised."""
        assert self.sink is not None
        try:
            queued = self.sink([r for batch in group for r in batch.records])
        except BaseException as exc:  # noqa: BLE001 - handed to every waiting caller
            return {day: exc for batch in group for day in batch.lines}
        for batch in group:
            batch.queued = queued
        return {}

    def _append(self, day: str, data: bytes) -> None:
        """One durable append to ``day``'s file (its folder made when missing: on the
        first write, and again if someone removed it)."""
        if not self._folder_made:
            self.loom.root.mkdir(parents=True, exist_ok=True)
            self._folder_made = True
        try:
            append_lines(self.loom.day_file(day), data)
        except FileNotFoundError:
            self.loom.root.mkdir(parents=True, exist_ok=True)
            append_lines(self.loom.day_file(day), data)

    def _finish(self, group: list[_Batch], failed: dict[str, BaseException]) -> None:
        with self._lock:
            self.commits += 1
            self.batches += len(group)
        for batch in group:
            batch.error = next((failed[d] for d in batch.lines if d in failed), None)
            batch.done = True
            batch.wake.release()


_COMMITTERS: dict[Path, GroupCommitter] = {}
_GUARD = threading.Lock()


def committer_for(root: Path) -> GroupCommitter:
    """This process's committer of the loom in ``root`` (made on first use)."""
    key = Path(os.path.abspath(root))
    with _GUARD:
        committer = _COMMITTERS.get(key)
        if committer is None:
            committer = _COMMITTERS[key] = GroupCommitter(Loom(key))
        return committer


def _forget_after_fork() -> None:
    global _GUARD
    _COMMITTERS.clear()
    _GUARD = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)
