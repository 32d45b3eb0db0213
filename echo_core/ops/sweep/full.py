"""``full_sweep``: make the vault's metadata and indexes agree with its notes (SPEC §5.1).

Dry run (the default) reads the vault once and reports every change; ``apply=True``
makes them. The vault lock is held from the first read to the plan, so no capture lands
between what is read and what is planned, but not for the notes' writes: those are made
in batches, each under a short hold of its own, so other writers get in between
(``batches``; each note written only while it holds the text the plan read). A last
hold makes the plan agree with the notes as they are then (``settle``: notes others
saved, created or deleted meanwhile are read again) and writes the indexes:

1. the marker: rewritten when missing or damaged, its schema stamped (``marker``);
2. frontmatter: each entity note gets the keys its kind requires and it lacks, one line
   each (``created`` = the file's date); a block it cannot edit line-wise is reported,
   not touched;
3. reciprocal links: B lists A under ``## Related`` when A's ``## Related`` links B;
4. alias proposals learned from resolve misses (SPEC §5.5), added with ``apply``;
5. the entity index, rebuilt from the notes (damaged files set aside first), written as
   a fresh snapshot with an empty journal;
6. the recall index, rebuilt from the texts already read;
7. the list of always-loaded notes in the state dir (``ops.always_load``).

With ``decay=True`` (``sweep --decay``, SPEC §2.7) the decay step (``ops.sweep.decay``)
is planned first and, with ``apply``, written before the notes are read, so the indexes
the sweep rebuilds already follow it; its report is the result's ``decay`` section.

Notes are rewritten through ``ctx.vault``: each prior text is kept in the note history.
A note a person saved between the read and the write is left as saved (a warning; the
next sweep plans it again): with ``apply`` the result reports only the changes made, so
those notes' fills, links and decay are neither listed nor counted, and the indexes hold
them as saved.
Errors: 78 for a folder that is no vault (``vault_check``) or an index or marker of a
newer schema; 75 when the vault lock is held too long (between two batches: those
written stay, and the next sweep finishes the work).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.bulk_work import collector_paused
from echo_core.models import Envelope
from echo_core.operations.spelling import spell
from echo_core.ops.always_load import save_registry
from echo_core.ops.recall_index import rebuild_index
from echo_core.ops.sweep.aliases import alias_proposals, apply_aliases, consume_misses
from echo_core.ops.sweep.apply import planned_set_aside, write_entity_index, write_marker
from echo_core.ops.sweep.batches import write_in_batches
from echo_core.ops.sweep.decay import apply_decay, plan_decay
from echo_core.ops.sweep.index_files import read_old_index
from echo_core.ops.sweep.marker import plan_marker
from echo_core.ops.sweep.model import SweepPhases, SweepResult
from echo_core.ops.sweep.note_facts import read_vault
from echo_core.ops.sweep.plan import entity_changes, make_plan
from echo_core.ops.sweep.settle import settle
from echo_core.ops.sweep.vault_check import require_repairable
from echo_core.ops.vault_changes import record_baseline
from echo_core.vault_seen import mark_seen

if TYPE_CHECKING:
    from echo_core.context import EchoContext

LOCK_TIMEOUT = 60.0


def _index_problem(damaged: dict[str, str], missing: bool) -> str:
    if damaged:
        return "; ".join(f"{path}: {why}" for path, why in sorted(damaged.items()))
    return "no entity index (it is rebuilt from the notes)" if missing else ""


@collector_paused()
def full_sweep(ctx: EchoContext, *, apply: bool = False, decay: bool = False,
               projects: Sequence[str] = ()) -> Envelope[SweepResult]:
    """The full sweep (module docstring); ``apply=False`` changes nothing. ``decay``:
    run the decay step too, ``projects`` confirming stale projects to put on hold."""
    require_repairable(ctx)
    start = time.perf_counter()
    storage = ctx.vault.storage
    lock = storage.lock(timeout=LOCK_TIMEOUT) if apply else contextlib.nullcontext()
    with lock:  # the read and the plan: no capture lands between them
        if apply:  # a capture killed part-way is finished before the vault is read
            from echo_core.ops.write_intent import recover_pending

            recover_pending(ctx)
        marker = plan_marker(storage, ctx.manifest.schema_version, ctx.today())
        decayed = None
        edited: tuple[str, ...] = ()
        if decay:
            decay_plan = plan_decay(ctx, projects)
            decayed, edited = apply_decay(ctx, decay_plan) if apply else (
                decay_plan.report, ())
        facts = read_vault(ctx)
        old = read_old_index(storage)
        scanned = time.perf_counter()
        plan = make_plan(ctx, facts, old.index)
        aliases = alias_proposals(ctx, plan.entities.entities)
        aside = planned_set_aside(ctx, old)
        planned = time.perf_counter()
        if apply:
            write_marker(ctx, marker)
    phases = SweepPhases(scan=scanned - start, plan=planned - scanned)
    indexed = len(plan.docs)
    if apply:
        written = write_in_batches(ctx, plan.writes, timeout=LOCK_TIMEOUT)
        edited += written.refused
        with storage.lock(timeout=LOCK_TIMEOUT):
            settled = settle(ctx, plan, facts, old, written)  # what was made, and is now
            plan, aliases = apply_aliases(ctx, settled.plan, aliases)  # those applied
            written_at = time.perf_counter()
            if aliases or entity_changes(plan) or not old.clean:
                write_entity_index(ctx, plan, aside)
            consume_misses(ctx, aliases)
            stored = time.perf_counter()
            indexed = rebuild_index(ctx, docs=plan.docs).indexed
            record_baseline(ctx, settled.digests, settled.scan)
            save_registry(ctx.state_dir, [p for p, n in facts.notes.items() if n.always_load],
                          ctx.today())
            phases = attrs.evolve(phases, write=written_at - planned,
                                  entities=stored - written_at,
                                  recall=time.perf_counter() - stored)
            mark_seen(ctx)
    entities = plan.entities
    result = SweepResult(
        applied=apply, notes=len(facts.notes), entities=len(entities.entities),
        entities_added=entities.added, entities_updated=entities.updated,
        entities_dropped=entities.dropped, frontmatter=plan.fills, skipped=plan.skipped,
        links=plan.links, marker=marker.repair, set_aside=aside,
        index_problem=_index_problem(old.damaged, old.missing), aliases=aliases,
        recall_indexed=indexed, unreadable=facts.unreadable,
        seconds=time.perf_counter() - start, phases=phases, decay=decayed)
    return Envelope(True, _action(result), _message(result), result,
                    tuple(f"could not read {p}: left as it is" for p in facts.unreadable)
                    + tuple(f"{p} was edited while the sweep wrote it: left as saved; the "
                            "next sweep plans it again" for p in dict.fromkeys(edited)))


def _action(result: SweepResult) -> Action:
    if not result.applied:
        return Action.DRY_RUN
    return Action.UPDATED if result.changes else Action.UNCHANGED


def _message(result: SweepResult) -> str:
    rate = result.notes / result.seconds if result.seconds else 0.0
    done = f"{result.notes} notes in {result.seconds:.2f} s ({rate:,.0f} notes/s)"
    if result.applied:
        return (f"swept {done}: {result.changes} changes made, {result.entities} "
                f"entities, recall index rebuilt ({result.recall_indexed} notes)")
    if not result.changes:
        return f"dry run over {done}: nothing to change"
    return (f"dry run over {done}: {result.changes} changes would be made; nothing was "
            f"written (run again with {spell('apply')} to make them)")
