"""The order ``flush`` keeps when a queued write does not land (SPEC §5.4).

Writes to one note replay in the order they were queued. A write that does not land
(the vault failed it while still answering, or a person was editing its note) stays
queued, and every later write that may touch one of its notes is *held back*: not tried
in this flush, so it replays after it at the next one. Writes to other notes go on.

Which notes a queued write touches, as known before it replays (``notes_written``):

* ``append``, ``put``, ``fm``: the one note ``args["path"]``;
* a capture without a kind: the inbox note (an inbox line, nothing else);
* anything else, above all a capture of an entity, is not known: routing re-runs against
  the entity index as it is at replay (a title an earlier capture creates resolves to
  that note), auto-links add ``## Related`` to other notes, and the daily note gets the
  agent-log line. Such a write may touch any note: it is held back when anything before
  it is, and when it does not land, everything after it is held back (the flush stops
  there, as it always did).

Notes are compared by path after NFC normalisation and case folding (one file on macOS
and Windows), so two spellings of one note never pass each other.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

import attrs

from echo_core.vault import INBOX_PATH

#: Queued operations whose replay writes the one note ``args["path"]``.
ONE_NOTE_OPS = frozenset({"append", "put", "fm"})


def note_key(path: str) -> str:
    """The key two spellings of one note share (NFC, case folded)."""
    return unicodedata.normalize("NFC", path).casefold()


def notes_written(record: Mapping[str, Any]) -> frozenset[str] | None:
    """The ``note_key`` of each note the queued ``record`` writes; None when that is not
    known before it replays (module docstring)."""
    args = record.get("args")
    if not isinstance(args, Mapping):
        return None
    op = record.get("op")
    if op in ONE_NOTE_OPS and isinstance(args.get("path"), str):
        return frozenset({note_key(args["path"])})
    if op == "capture" and not args.get("kind"):
        return frozenset({note_key(INBOX_PATH)})
    return None


@attrs.define
class HeldNotes:
    """The notes whose writes wait for the next flush, each with the id of the first
    write to it that did not land; ``everything``: the id of a write whose notes are not
    known that did not land or was held back (all later writes wait for it)."""

    blockers: dict[str, str] = attrs.field(factory=dict)
    everything: str | None = None

    def blocker(self, notes: frozenset[str] | None) -> str | None:
        """The id of the write a write to ``notes`` (None: not known) must wait for, or
        None when it may replay now."""
        if self.everything is not None:
            return self.everything
        if notes is None:
            return next(iter(self.blockers.values()), None)
        return next((self.blockers[key] for key in sorted(notes) if key in self.blockers),
                    None)

    def hold(self, record_id: str, notes: frozenset[str] | None) -> None:
        """The write ``record_id`` to ``notes`` stays queued: later writes to any of them
        (to any note at all when ``notes`` is None) wait for it."""
        if notes is None:
            self.everything = self.everything or record_id
            return
        for key in notes:
            self.blockers.setdefault(key, record_id)
