"""Writing a sweep's notes in batches, each under a short hold of the vault lock.

Thousands of rewrites under one hold would keep the lock for tens of seconds on
PostgreSQL, and a capture from another process or machine would give up waiting for it.
So ``write_in_batches`` writes a batch at a time, each under a hold of its own, and lets
the lock go for ``BETWEEN_BATCHES`` seconds before the next, so other writers get in (a
writer waiting for a folder vault's lock file looks again within 50 ms; PostgreSQL hands
the lock to the first in its queue). A batch is sized from the time the one before took
per note, to hold the lock about ``HOLD_SECONDS`` (the first has ``FIRST_BATCH`` notes;
at most four times the one before, at most ``MOST_PER_BATCH``).

In a batch, the prior texts are kept in the note history first (``history_batch``),
then each note is written only while it still holds the text the plan read
(``Vault.update_note``): a note someone saved since the read, between two batches as
well, is left as saved and listed (``refused``; the next sweep plans it again). The
recall index is not told of each write (``EchoContext.vault_for_rebuild``): the sweep
rebuilds it. After its writes, each batch takes their stamps, so the sweep's last hold
can tell the notes someone else changed since (``settle``). Killed or timed out (75)
between batches, the batches written stay written, each note whole; their new stamps
bring them to the next sweep.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from echo_core.errors import EditedMeanwhile
from echo_core.ops.sweep.history_batch import keep_priors
from echo_core.ops.sweep.plan import NoteWrite
from echo_core.ops.vault_changes import Stamp
from echo_core.vault_scan import file_stamps

if TYPE_CHECKING:
    from echo_core.context import EchoContext

#: Seconds a batch aims to hold the vault lock.
HOLD_SECONDS = 0.5
#: Seconds the lock is left free between two batches (module docstring).
BETWEEN_BATCHES = 0.06
FIRST_BATCH = 32
MOST_PER_BATCH = 2048


@attrs.frozen
class WrittenNotes:
    """What the batches did: the notes left as a person saved them (``refused``), and
    the stamp each written note had right after its batch (None: gone by then)."""

    refused: tuple[str, ...] = ()
    stamps: dict[str, Stamp | None] = attrs.field(factory=dict)


def next_size(size: int, notes: int, seconds: float) -> int:
    """The next batch's size after ``notes`` notes took ``seconds`` (module docstring)."""
    if notes <= 0 or seconds <= 0:
        return min(size * 4, MOST_PER_BATCH)
    fits = int(HOLD_SECONDS * notes / seconds)
    return max(1, min(fits, size * 4, MOST_PER_BATCH))


def write_in_batches(ctx: EchoContext, writes: Sequence[NoteWrite], *,
                     timeout: float) -> WrittenNotes:
    """Write ``writes`` a batch at a time, each batch under its own hold of the vault lock
    (waiting at most ``timeout`` s for it: else exit 75, the batches before it written).
    See the module docstring."""
    storage = ctx.vault.storage
    vault = ctx.vault_for_rebuild()
    refused: list[str] = []
    stamps: dict[str, Stamp | None] = {}
    size, start = FIRST_BATCH, 0
    while start < len(writes):
        if start:
            time.sleep(BETWEEN_BATCHES)
        batch = writes[start:start + size]
        with storage.lock(timeout=timeout):
            began = time.perf_counter()
            keep_priors(ctx, batch)
            written: list[str] = []
            for write in batch:
                try:
                    vault.update_note(write.path, write.text, write.prior, keep_history=False)
                except EditedMeanwhile:
                    refused.append(write.path)
                else:
                    written.append(write.path)
            stamps.update(file_stamps(storage, written))
            took = time.perf_counter() - began
        start += len(batch)
        size = next_size(size, len(batch), took)
    return WrittenNotes(tuple(refused), stamps)
