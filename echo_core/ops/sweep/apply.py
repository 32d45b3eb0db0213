"""Writing a sweep's plan (the caller holds the vault lock): the marker, damaged
entity-index files set aside, then the rebuilt entity index as one fresh snapshot with
an empty journal (``EntityStore.compact``). The notes are written in batches, each under
a hold of its own (``batches``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from echo_core.entities import EntityIndex
from echo_core.errors import EchoError
from echo_core.ops.sweep.index_files import OldIndex, aside_path, set_aside
from echo_core.ops.sweep.marker import MarkerPlan
from echo_core.ops.sweep.model import SetAside
from echo_core.ops.sweep.plan import SweepPlan
from echo_core.vault import MARKER_PATH

if TYPE_CHECKING:
    from echo_core.context import EchoContext


def planned_set_aside(ctx: EchoContext, old: OldIndex) -> tuple[SetAside, ...]:
    """Where each damaged index file would go (``.corrupt-<timestamp>`` next to it)."""
    stamp = ctx.now().strftime("%Y%m%dT%H%M%S")
    storage = ctx.vault.storage
    return tuple(SetAside(path, aside_path(storage, path, stamp), why)
                 for path, why in sorted(old.damaged.items()))


def write_marker(ctx: EchoContext, marker: MarkerPlan) -> None:
    """Write the repaired marker (its prior text, if any, goes to the note history)."""
    if marker.repair is not None:
        ctx.vault.write_note(MARKER_PATH, marker.new_text, prior=marker.current)


def write_entity_index(ctx: EchoContext, plan: SweepPlan, aside: tuple[SetAside, ...]) -> None:
    """Set the damaged files aside, then store the rebuilt index (keeping the operation
    ids of a readable old index, so a queued capture that already landed stays done)."""
    storage = ctx.vault.storage
    for item in aside:
        set_aside(storage, item.path, item.to)
    store = ctx.entities
    try:
        store.load()
    except (EchoError, KeyError, TypeError, AttributeError):
        pass  # unreadable: its operation ids are lost with it
    store.compact(EntityIndex(plan.entities.entities))
