"""Making the mechanical repairs of a lint run (``lint --fix --apply``).

Frontmatter repairs of one note are applied together: the note is re-read under the
vault lock, and only when it is still the text lint read is it changed (one line per
key, ``backfill_frontmatter``; then, for an expired working note, archived with
``decay_working.archived_text``, the bytes ``sweep --decay`` would write) and written
through ``ctx.vault`` (atomic, the prior version kept in the note history). A note
changed since lint read it is left alone and its repair reported as not applied (run
lint again). Index repairs then go through
``index_sync.sync_paths`` for every path they name, after the note writes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.errors import EchoError, EditedMeanwhile
from echo_core.ops.frontmatter_backfill import backfill_frontmatter
from echo_core.ops.index_sync import sync_paths
from echo_core.ops.lint.model import Repair
from echo_core.ops.lint.snapshot import VaultSnapshot
from echo_core.ops.sweep.decay_working import archived_text
from echo_core.storage_base import none_if_absent

if TYPE_CHECKING:
    from echo_core.context import EchoContext

log = logging.getLogger("echo_memory")


def _write_frontmatter(ctx: EchoContext, snap: VaultSnapshot, path: str,
                       values: dict[str, Any], archive: bool = False) -> bool:
    """Set ``values`` on the note at ``path`` (then archive it, with ``archive``) if it
    is as lint read it; True when done."""
    storage = ctx.vault.storage
    with storage.lock():
        current = none_if_absent(lambda: storage.read(path))
        if current is None:
            return False
        if current != snap.notes[path].text:
            log.info("lint: %s changed since it was read; not repaired", path)
            return False
        try:
            after = backfill_frontmatter(current, values)
            if archive:
                after = archived_text(after, snap.today)
        except EchoError as exc:
            log.info("lint: %s not repaired: %s", path, exc.message)
            return False
        if after != current:
            try:
                ctx.vault.update_note(path, after, current)
            except EditedMeanwhile:
                log.info("lint: %s was edited while it was repaired; not repaired", path)
                return False
    return True


def apply_repairs(ctx: EchoContext, snap: VaultSnapshot,
                  repairs: Sequence[Repair]) -> tuple[Repair, ...]:
    """Make ``repairs`` (see the module docstring); each returned with ``applied``."""
    values: dict[str, dict[str, Any]] = {}
    for repair in repairs:
        if repair.frontmatter or repair.archive:
            values.setdefault(repair.path, {}).update(repair.frontmatter)
    archive = {r.path for r in repairs if r.archive}
    written = {path: _write_frontmatter(ctx, snap, path, keys, path in archive)
               for path, keys in values.items()}
    synced: set[str] = set()
    to_sync = sorted({r.path for r in repairs if r.index_sync})
    if to_sync:
        result = sync_paths(ctx, to_sync)
        if not result.entities_pending:
            synced = set(to_sync) - set(result.unreadable)
    return tuple(attrs.evolve(r, applied=(not (r.frontmatter or r.archive)
                                          or written.get(r.path, False))
                              and (not r.index_sync or r.path in synced))
                 for r in repairs)
