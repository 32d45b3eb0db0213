"""The sweep's last hold of the vault lock: its plan made to agree with the notes now.

The lock was free between the batches of ``write_in_batches``, so others may have
saved, created or deleted notes since the sweep read them. ``settle`` (the caller holds
the lock) lists the vault's notes once with their stamps and compares each with the one
the sweep knows: the stamp it read the note at, or the one its batch left. The notes
that differ, and those a batch did not write because a person had saved them
(``refused``), are read again: their entities and recall documents come from their text
now, with slugs from the stored entity index read again (an entry a capture added
meanwhile keeps its slug), and the refused ones leave the report (``plan.as_written``).
That listing, with each note's content hash, is the baseline the next fast sweep starts
from (``record_baseline``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

from echo_core.entities import content_hash
from echo_core.models import TreeScan
from echo_core.ops.index_sync import read_current
from echo_core.ops.sweep.batches import WrittenNotes
from echo_core.ops.sweep.index_files import OldIndex, read_old_index
from echo_core.ops.sweep.note_facts import VaultFacts
from echo_core.ops.sweep.plan import SweepPlan, as_written
from echo_core.ops.vault_changes import Stamp
from echo_core.protocols import Storage
from echo_core.vault_scan import scan_tree

if TYPE_CHECKING:
    from echo_core.context import EchoContext


@attrs.frozen
class Settled:
    """The plan as written and as the notes are now; the listing it was checked against
    (None: the read was not a scan's, so only refused notes were read again); and each
    note's content hash once written (a note missing: read again by the next fast
    sweep)."""

    plan: SweepPlan
    scan: TreeScan | None
    digests: dict[str, str]


def changed_since(storage: Storage, read: TreeScan,
                  stamps: Mapping[str, Stamp | None]) -> tuple[TreeScan, list[str]]:
    """A new listing of the vault's ``.md`` files, and the paths whose stamp is not the
    one ``read`` saw, or, for a note written since, the one in ``stamps`` (None: gone);
    new and gone notes included."""
    scan = scan_tree(storage, ".md")
    expected: dict[str, Stamp | None] = dict(read.files)
    expected.update(stamps)
    found = scan.files
    changed = [p for p in sorted(found.keys() | expected.keys())
               if found.get(p) != expected.get(p)]
    return scan, changed


def settle(ctx: EchoContext, plan: SweepPlan, facts: VaultFacts, old: OldIndex,
           written: WrittenNotes) -> Settled:
    """``plan`` as written and the notes as they are now (module docstring). Reads the
    notes changed meanwhile, and the entity index again when there are any."""
    storage = ctx.vault.storage
    refused = set(written.refused)
    scan: TreeScan | None = None
    changed: list[str] = sorted(refused)
    if facts.scan is not None:
        scan, found = changed_since(storage, facts.scan, written.stamps)
        changed = sorted(refused.union(found))
    if not changed:
        return Settled(plan, scan, _digests(facts, plan, {}, []))
    now, bad = read_current(ctx, changed)
    index = read_old_index(storage).index
    settled = as_written(ctx, plan, facts, index, refused, now)
    return Settled(settled, scan, _digests(facts, settled, now, bad))


def _digests(facts: VaultFacts, plan: SweepPlan, now: Mapping[str, str | None],
             bad: list[str]) -> dict[str, str]:
    """Each note's content hash once the plan is written, the notes read again as read."""
    digests = {path: note.digest for path, note in facts.notes.items()}
    digests.update({write.path: content_hash(write.text) for write in plan.writes})
    for path, text in now.items():
        if text is None:
            digests.pop(path, None)
        else:
            digests[path] = content_hash(text)
    for path in bad:
        digests.pop(path, None)
    return digests
