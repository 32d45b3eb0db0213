"""The notes echo-memory writes are recorded as seen, so the next process does not
re-discover them as hand edits.

A short-lived process checks the vault for notes changed outside echo-memory before it
answers (``ops.freshness``): a folder whose stamp moved is listed whole, and every note
found new or moved is read and synced to both indexes. Without this module, a capture's
own new note moved its folder's stamp, and the next process (the next capture, the next
prompt's recall) listed that folder again: tens of milliseconds in a 20k-note folder.

``OwnWrites`` collects, during one operation, the notes written or deleted through the
context's vault (whose writes already keep the recall index current) and, before each
first write into a folder, that folder's stamp. ``settle(ctx)``, run once the operation
succeeded, does what the freshness check would have done for those notes and no more:

* the entity index is synced with their texts (``sync_paths(recall=False)``: a note a
  capture committed already matches and costs one lookup; one written by ``write`` in a
  kind's folder becomes its entity as a hand-written note would);
* their manifest rows get their new stamps and content hashes;
* a folder's new stamp is recorded only when its stamp before this operation's first
  write into it was the one recorded, and its stamp now is the one this operation's last
  write into it left: a folder that someone else changed first, or since (another
  process's capture between this one's unlock and its settle, say), keeps its old
  stamp, so the next check still lists it and finds their change.

What it cannot see: a person changing the same folder or note in the instant between
this process's ``stat`` and its write, or its write and the ``stat`` after it
(microseconds), is recorded as this process's own write; the unbounded check at session start, which compares every note's stamp, and the
fast sweep's verification shard find such an edit later. A backend with a change log
(``ops.change_feed``) gets the notes' rows recorded (no folder stamps): its next catch-up
sees this process's own changes, finds each hash recorded and reads nothing. Other
backends without folder stamps (remote ones, where each ``stat`` is a round trip) are
left to their periodic sweeps as before. A failure here is logged and never fails the operation: the next check then
finds the notes as it always did.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from echo_core.lazy_log import lazy_logger

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.protocols import Storage

log = lazy_logger("echo_memory")


def _folder_of(path: str) -> str:
    return path.rpartition("/")[0]


class OwnWrites:
    """The notes one context wrote since its last ``settle`` (thread-safe)."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._lock = threading.Lock()
        self._texts: dict[str, str | None] = {}  # path -> text written, None: deleted
        self._before: dict[str, int | None] = {}  # folder -> its stamp before our writes
        self._after: dict[str, int | None] = {}  # folder -> its stamp after our last write
        self._stamped: bool | None = None
        self._numbered: bool | None = None

    def _has_stamps(self) -> bool:
        if self._stamped is None:
            from echo_core.vault_scan import has_folder_stamps

            self._stamped = has_folder_stamps(self._storage)
        return self._stamped

    def _collects(self) -> bool:
        """Folder stamps, or a change log (whose catch-up would otherwise read this
        process's own notes again): then the notes written are collected."""
        if self._numbered is None:
            from echo_core.ops.change_numbers import has_change_log

            self._numbered = has_change_log(self._storage)
        return self._has_stamps() or self._numbered

    def writing(self, path: str) -> None:
        """Called before a note at ``path`` is written or deleted: keeps its folder's
        stamp as it is before this operation's first write there."""
        if not self._has_stamps():
            return
        folder = _folder_of(path)
        with self._lock:
            if folder in self._before:
                return
        from echo_core.vault_scan import folder_stamps

        stamp = folder_stamps(self._storage, [folder]).get(folder)
        with self._lock:
            self._before.setdefault(folder, stamp)

    def written(self, path: str, text: str | None) -> None:
        """Called after the note at ``path`` was written (``text``) or deleted (None):
        keeps its folder's stamp as this write left it."""
        if not self._collects():
            return
        if not self._has_stamps():  # a change log: the notes alone
            with self._lock:
                self._texts[path] = text
            return
        from echo_core.vault_scan import folder_stamps

        folder = _folder_of(path)
        stamp = folder_stamps(self._storage, [folder]).get(folder)
        with self._lock:
            self._texts[path] = text
            self._after[folder] = stamp

    def forget(self) -> None:
        """Drop what was collected (an operation that failed part-way: the next freshness
        check finds its notes as hand edits, the safe way)."""
        with self._lock:
            self._texts, self._before, self._after = {}, {}, {}

    def settle(self, ctx: EchoContext) -> None:
        """Sync and record what was collected (see the module docstring), then forget it."""
        with self._lock:
            texts, before, after = self._texts, self._before, self._after
            self._texts, self._before, self._after = {}, {}, {}
        if not texts:
            return
        try:
            _record(ctx, self._storage, texts, before, after)
        except Exception as exc:
            log.info("own writes not recorded (%s); the next freshness check finds them", exc)
            log.debug("own writes failure", exc_info=True)


def _record(ctx: EchoContext, storage: Storage, texts: dict[str, str | None],
            before: dict[str, int | None], after: dict[str, int | None]) -> None:
    from echo_core.entities import content_hash
    from echo_core.ops.index_sync import sync_paths
    from echo_core.ops.vault_changes import manifest_of, tracked
    from echo_core.vault_manifest import Row
    from echo_core.vault_scan import file_stamps, folder_stamps

    manifest = manifest_of(ctx)
    if not manifest.has_baseline():
        return  # the first check makes the baseline from the whole vault
    notes = {p: t for p, t in texts.items() if tracked(p)}
    if not notes:
        return
    sync = sync_paths(ctx, notes, texts=notes, recall=False, lock_timeout=0.5)
    if sync.entities_pending or sync.unreadable:
        return  # the entity index did not take them: the next check finds them again
    stamps = file_stamps(storage, sorted(notes))
    rows: dict[str, Row | None] = {}
    for path, text in notes.items():
        stamp = stamps.get(path)
        if stamp is None or text is None:
            if (stamp is None) != (text is None):
                return  # changed again since this write: the next check looks at it all
            rows[path] = None
            continue
        rows[path] = (stamp[0], stamp[1], content_hash(text))
    recorded = manifest.folders()
    wanted = sorted(f for f, was in before.items()
                    if was is not None and recorded.get(f) == was)
    now = folder_stamps(storage, wanted)
    folders = {f: m for f, m in now.items() if m is not None and m == after.get(f)}
    manifest.update(rows, folders)
