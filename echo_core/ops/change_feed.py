"""Catching up with a shared vault by change number (SPEC §1.5, issue 20).

A backend whose every write is numbered in a gapless change log (the PostgreSQL one)
offers two optional methods, found by duck typing (they are not part of ``Storage``):

* ``last_change() -> int``: the number of the last committed change (0: none yet);
* ``changes_since(seq, limit) -> [(seq, path, op), ...]``: the changes after ``seq``,
  oldest first, at most ``limit``; gapless, so catching up from the last number applied
  misses nothing.

With such a backend the freshness check does not scan the vault: ``catch_up(ctx)``
asks for the changes after the number this state dir last applied (the manifest's
``change_seq`` fact), syncs those paths to both indexes (``vault_changes.sync_changed``:
each stat-ed and hashed, so a note this machine wrote itself costs no index write) and
records the new number. When nothing changed that is one query. The number is recorded
only once the entity index took the changes (a busy vault lock leaves them to the next
catch-up), and only ever moves forward here.

A change log that does not continue from the recorded number — the vault's log
restarted (a number lower than recorded), or its first change after the recorded one
is not the next number, or it holds none up to its last number (pruned) — or a state dir with no number or no baseline yet, falls back to
the fast sweep (``fast_sweep``: the whole vault listed and compared with the manifest),
which records the number it read before it listed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from echo_core.ops.change_numbers import (
    SEQ_KEY,
    applied_change,
    change_position,
    has_change_log,
    record_change,
)
from echo_core.ops.vault_changes import Changes, manifest_of, sync_changed

if TYPE_CHECKING:
    from echo_core.context import EchoContext

__all__ = ["BATCH", "SEQ_KEY", "applied_change", "catch_up", "change_position",
           "has_change_log", "record_change"]

#: Changes asked for per query while catching up.
BATCH = 10_000


def catch_up(ctx: EchoContext, *, lock_timeout: float = 5.0) -> Changes:
    """Apply the changes made since this state dir last caught up (module docstring);
    what it found and did. ``lock_timeout``: how long the entity part waits for the
    vault lock. Errors of the backend propagate (``BackendUnavailable``)."""
    storage: Any = ctx.vault.storage  # has_change_log(storage): the caller checked
    manifest = manifest_of(ctx)
    recorded = applied_change(manifest)
    last = int(storage.last_change())
    if recorded is None or last < recorded or not manifest.has_baseline():
        return _resync(ctx)
    if last == recorded:
        return Changes()
    paths: set[str] = set()
    seq = recorded
    while seq < last:
        rows = storage.changes_since(seq, BATCH)
        if not rows or int(rows[0][0]) != seq + 1:  # the log does not continue from here
            return _resync(ctx)
        for number, path, _op in rows:
            paths.add(str(path))
            seq = int(number)
    changes = sync_changed(ctx, paths, lock_timeout=lock_timeout)
    if not changes.sync.entities_pending:
        record_change(manifest, seq)
    return changes


def _resync(ctx: EchoContext) -> Changes:
    """The fast sweep (it records the change number it started from)."""
    from echo_core.ops.fast_sweep import fast_sweep
    from echo_core.ops.index_sync import IndexSync

    done = fast_sweep(ctx).data
    return Changes(new=done.new, changed=done.changed, gone=done.gone,
                   unreadable=done.unreadable,
                   sync=IndexSync(entities_put=done.entities_put,
                                  entities_removed=done.entities_removed,
                                  entities_pending=done.pending))
