"""Aliases learned from resolve misses (SPEC §5.5).

``resolve-misses.ndjson`` in the state dir holds resolve misses with their fuzzy
candidates and ``merge_into`` confirmations. A mention confirmed for one slug at least
``CONFIRMED`` times, or missed with that entity as its only candidate at least ``FUZZY``
times, is proposed as an alias of the entity, unless it already names it or names
another entity. ``--apply`` adds it to the note's frontmatter ``aliases`` (one line) and
consumes the log lines that made the proposal; the rest of the log is kept, capped at
``KEEP_LINES``.
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.corpus import index_doc
from echo_core.entities import EntityIndex
from echo_core.errors import EchoError, EditedMeanwhile
from echo_core.frontmatter import set_frontmatter_key
from echo_core.models import Entity
from echo_core.names import name_key
from echo_core.note_entities import entity_of_text, kind_folders, note_aliases
from echo_core.notes import parse_note
from echo_core.ops.sweep.model import AliasProposal
from echo_core.ops.sweep.plan import SweepPlan
from echo_core.ops.telemetry import MISSES_FILE
from echo_core.tempfiles import temp_name

if TYPE_CHECKING:
    from echo_core.context import EchoContext

CONFIRMED = 2
FUZZY = 3
KEEP_LINES = 500


def _records(ctx: EchoContext) -> list[tuple[str, dict[str, Any] | None]]:
    """Each log line with its record (None for a line that is not one)."""
    try:
        text = (ctx.state_dir / MISSES_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out: list[tuple[str, dict[str, Any] | None]] = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        out.append((line, record if isinstance(record, dict) else None))
    return out


def _evidence(record: dict[str, Any]) -> tuple[str, str, str] | None:
    """(kind of evidence, mention, slug) of one record, None when it proves nothing."""
    mention = record.get("mention")
    if not isinstance(mention, str) or not mention.strip():
        return None
    if record.get("event") == "merge_into" and isinstance(record.get("slug"), str):
        return "confirmed", mention.strip(), record["slug"]
    candidates = record.get("candidates")
    if record.get("event") == "miss" and isinstance(candidates, list) and len(candidates) == 1:
        return "fuzzy", mention.strip(), str(candidates[0])
    return None


def alias_proposals(ctx: EchoContext, entities: Sequence[Entity]) -> tuple[AliasProposal, ...]:
    """The aliases the log proposes for the rebuilt ``entities`` (module docstring)."""
    counts: Counter[tuple[str, str, str]] = Counter()
    spelling: dict[tuple[str, str], str] = {}
    for _line, record in _records(ctx):
        found = _evidence(record) if record is not None else None
        if found is not None:
            kind, mention, slug = found
            counts[(kind, name_key(mention), slug)] += 1
            spelling[(name_key(mention), slug)] = mention
    if not counts:
        return ()
    index = EntityIndex(entities)
    proposals: dict[tuple[str, str], AliasProposal] = {}
    for (kind, key, slug), n in sorted(counts.items()):
        if n < (CONFIRMED if kind == "confirmed" else FUZZY) or (key, slug) in proposals:
            continue
        entity = index.get(slug)
        mention = spelling[(key, slug)]
        if entity is None or not key or index.exact(mention):
            continue  # gone, or the mention already names an entity (this one or another)
        reason = (f"confirmed with merge_into {n} times" if kind == "confirmed"
                  else f"missed {n} times with this entity its only candidate")
        proposals[(key, slug)] = AliasProposal(slug, entity.path, mention, reason)
    return tuple(proposals.values())


def apply_aliases(ctx: EchoContext, plan: SweepPlan, proposals: Sequence[AliasProposal]
                  ) -> tuple[SweepPlan, tuple[AliasProposal, ...]]:
    """Add each proposed alias to its note's frontmatter ``aliases``; return the plan
    with those entities (and recall documents) re-derived from the new texts, and the
    proposals applied. A note whose frontmatter cannot be edited line-wise, or that a
    person saved while it was written (``Vault.update_note``), keeps its text: its
    proposals are not applied and stay in the log for the next sweep."""
    if not proposals:
        return plan, ()
    by_path: dict[str, list[str]] = defaultdict(list)
    for proposal in proposals:
        by_path[proposal.path].append(proposal.alias)
    folders = kind_folders(ctx.manifest)
    changed: dict[str, Entity] = {}
    docs = {d.path: d for d in plan.docs}
    slugs = {e.path: e.slug for e in plan.entities.entities}
    written: set[str] = set()
    for path, aliases in sorted(by_path.items()):
        if path not in slugs:
            continue  # no longer an entity (a person's save since the plan): stays in the log
        before = ctx.vault.storage.read(path)
        current = note_aliases(parse_note(path, before).frontmatter)
        try:
            text = set_frontmatter_key(before, "aliases", [*current, *aliases])
        except EchoError:
            continue  # a block it cannot edit line-wise: the proposal stays in the log
        try:
            ctx.vault.update_note(path, text, before)
        except EditedMeanwhile:
            continue  # a person saved it meanwhile: their text is kept, the proposal too
        entity = entity_of_text(path, text, slugs[path], folders, ctx.manifest)
        if entity is not None:
            changed[path] = entity
        doc = index_doc(parse_note(path, text))
        if doc is not None:
            docs[path] = doc
        written.add(path)
    entities = tuple(changed.get(e.path, e) for e in plan.entities.entities)
    return (attrs.evolve(plan, entities=attrs.evolve(plan.entities, entities=entities),
                         docs=tuple(docs.values())),
            tuple(p for p in proposals if p.path in written))


def consume_misses(ctx: EchoContext, proposals: Sequence[AliasProposal]) -> None:
    """Drop the log lines behind the applied ``proposals``; keep the last ``KEEP_LINES``
    of the rest. Telemetry never fails the sweep."""
    records = _records(ctx)
    if not records:
        return
    used = {(name_key(p.alias), p.slug) for p in proposals}
    kept = []
    for line, record in records:
        found = _evidence(record) if record is not None else None
        if found is None or (name_key(found[1]), found[2]) not in used:
            kept.append(line)
    kept = kept[-KEEP_LINES:]
    if len(kept) == len(records):
        return
    target = ctx.state_dir / MISSES_FILE
    tmp = target.with_name(temp_name(MISSES_FILE))
    try:
        tmp.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        pass

