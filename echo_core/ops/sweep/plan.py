"""The whole plan of a full sweep, from the notes as read: the notes to rewrite (with
their new texts), the rebuilt entity index and the recall documents. Pure apart from
reading the few notes that gain a link and were not kept in memory. ``as_written``
turns it into what was done once some rewrites were refused (a person saved the note
first) and others changed notes while the sweep wrote."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

import attrs

from echo_core.corpus import index_doc
from echo_core.entities import EntityIndex
from echo_core.frontmatter import render_value
from echo_core.models import Entity
from echo_core.note_entities import entity_of_text, kind_folders
from echo_core.notes import parse_note
from echo_core.ops.links import add_related
from echo_core.ops.sweep.entity_plan import EntityPlan, plan_entities
from echo_core.ops.sweep.link_plan import missing_backlinks
from echo_core.ops.sweep.model import FrontmatterFill, LinkAdded, NoteSkipped
from echo_core.ops.sweep.note_facts import VaultFacts
from echo_core.protocols import IndexDoc

if TYPE_CHECKING:
    from echo_core.context import EchoContext


@attrs.frozen
class NoteWrite:
    """One note rewritten: its text now and the text it gets."""

    path: str
    prior: str
    text: str


@attrs.frozen
class SweepPlan:
    """Everything the sweep changes (or would), in the report's terms."""

    writes: tuple[NoteWrite, ...]
    fills: tuple[FrontmatterFill, ...]
    skipped: tuple[NoteSkipped, ...]
    links: tuple[LinkAdded, ...]
    entities: EntityPlan
    docs: tuple[IndexDoc, ...]


def _texts(ctx: EchoContext, facts: VaultFacts, backlinks: dict[str, list[str]]) -> dict[str, tuple[str, str]]:
    """path -> (text now, text with its missing keys added) of every note that changes
    or may gain a link."""
    out: dict[str, tuple[str, str]] = {}
    for path, note in facts.notes.items():
        if note.text is not None and note.filled is not None:
            out[path] = (note.text, note.filled)
    unread = [p for p in backlinks if p not in out]
    if unread:
        for path, text in ctx.vault.storage.read_many(unread).items():
            if text is not None:
                out[path] = (text, text)
    return out


def make_plan(ctx: EchoContext, facts: VaultFacts, old: EntityIndex) -> SweepPlan:
    """The plan for the notes in ``facts`` against the stored index ``old``."""
    backlinks = missing_backlinks(facts.notes)
    texts = _texts(ctx, facts, backlinks)
    links: list[LinkAdded] = []
    writes: dict[str, NoteWrite] = {}
    for path, (prior, text) in sorted(texts.items()):
        for source in backlinks.get(path, ()):
            text, changed = add_related(text, source)
            if changed:
                links.append(LinkAdded(path, source))
        if text != prior:
            writes[path] = NoteWrite(path, prior, text)
    fills = tuple(FrontmatterFill(p, tuple(n.fill), tuple(render_value(v) for v in n.fill.values()))
                  for p, n in sorted(facts.notes.items()) if n.fill and p in writes)
    skipped = tuple(NoteSkipped(p, n.fill_problem)
                    for p, n in sorted(facts.notes.items()) if n.fill_problem)
    folders = kind_folders(ctx.manifest)
    derived: dict[str, Entity] = {}
    docs: list[IndexDoc] = []
    for path, note in facts.notes.items():
        write = writes.get(path)
        entity, doc = note.entity, note.doc
        if write is not None:
            entity = entity_of_text(path, write.text, "", folders, ctx.manifest)
            doc = index_doc(parse_note(path, write.text))
        if entity is not None:
            derived[path] = entity
        if doc is not None:
            docs.append(doc)
    present = set(facts.notes) | set(facts.unreadable)
    entities = plan_entities(derived, old, present, set(facts.unreadable))
    return SweepPlan(tuple(writes.values()), fills, skipped, tuple(links), entities,
                     tuple(docs))


def entity_changes(plan: SweepPlan) -> int:
    """How many entity-index entries the plan adds, updates or drops."""
    e = plan.entities
    return len(e.added) + len(e.updated) + len(e.dropped)


def as_written(ctx: EchoContext, plan: SweepPlan, facts: VaultFacts, old: EntityIndex,
               refused: Collection[str], now: Mapping[str, str | None]) -> SweepPlan:
    """``plan`` as written when the rewrites of the notes ``refused`` were not made (a
    person saved them after the plan read them, ``batches.write_in_batches``) and the
    other notes ``now`` holds changed after the plan read them (saved by someone between
    two batches of the sweep, or after it rewrote them; created or deleted meanwhile):
    the fills and links of ``refused`` are dropped from the report, and the entities and
    recall documents of every note in ``now`` come from its text there (None: the note
    is gone, so none), so the entity index the sweep stores and the counts it reports
    are of the notes as they are. ``old``: the stored index the slugs come from. A
    path of ``refused`` that ``now`` lacks could not be read: its stored entity stays."""
    if not refused and not now:
        return plan
    left = set(refused)
    again = set(now)
    redone = again | left
    folders = kind_folders(ctx.manifest)
    unreadable = (set(facts.unreadable) - again) | (left - again)
    derived = {e.path: e for e in plan.entities.entities
               if e.path not in redone and e.path not in unreadable}
    docs = [d for d in plan.docs if d.path not in redone]
    present = ((set(facts.notes) | unreadable | again)
               - {p for p in again if now[p] is None})
    for path in sorted(again):
        text = now[path]
        if text is None:
            continue
        entity = entity_of_text(path, text, "", folders, ctx.manifest)
        if entity is not None:
            derived[path] = entity
        doc = index_doc(parse_note(path, text))
        if doc is not None:
            docs.append(doc)
    return SweepPlan(
        tuple(w for w in plan.writes if w.path not in left),
        tuple(f for f in plan.fills if f.path not in left), plan.skipped,
        tuple(link for link in plan.links if link.path not in left),
        plan_entities(derived, old, present, unreadable), tuple(docs))
