"""The entity index a vault's notes make, against the one stored (SPEC §5.1).

Every note in a kind folder is an entity (``NoteFacts.entity``). A path the stored index
already holds keeps its slug; a new note gets ``unique_slug`` (its file stem, made free
with ``-2``, ``-3``...); a stored entry whose note is gone, or is no longer an entity, is
dropped. A note that could not be read keeps its stored entry as it is. Pure: the dry
run reports exactly what ``--apply`` writes.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from echo_core.entities import EntityIndex
from echo_core.models import Entity
from echo_core.note_entities import unique_slug
from echo_core.ops.sweep.model import EntityChange

_COMPARED = ("path", "kind", "title", "aliases", "h")


@attrs.frozen
class EntityPlan:
    """The rebuilt index's entities and the changes against the stored one."""

    entities: tuple[Entity, ...]
    added: tuple[EntityChange, ...]
    updated: tuple[EntityChange, ...]
    dropped: tuple[EntityChange, ...]


def _change(entity: Entity, fields: tuple[str, ...] = (), reason: str = "") -> EntityChange:
    return EntityChange(entity.slug, entity.path, entity.kind, entity.title, fields, reason)


def plan_entities(derived: Mapping[str, Entity], old: EntityIndex, present: set[str],
                  unreadable: set[str]) -> EntityPlan:
    """``derived``: path -> the entity its note is (any slug); ``present``: every path
    in the vault now. See the module docstring."""
    slugs: dict[str, str] = {}
    for path in derived:
        kept = old.by_path(path)
        if kept is not None:
            slugs[path] = kept.slug
    claimed = set(slugs.values())
    for path in sorted(derived):
        if path not in slugs:
            slug = unique_slug(path, claimed.__contains__)
            slugs[path] = slug
            claimed.add(slug)
    entities: list[Entity] = []
    added: list[EntityChange] = []
    updated: list[EntityChange] = []
    for path in sorted(derived):
        entity = attrs.evolve(derived[path], slug=slugs[path])
        entities.append(entity)
        before = old.get(entity.slug)
        if before is None:
            added.append(_change(entity))
        elif before != entity:
            fields = tuple(f for f in _COMPARED if getattr(before, f) != getattr(entity, f))
            updated.append(_change(entity, fields))
    dropped: list[EntityChange] = []
    for slug, before in sorted(old.entities.items()):
        if slug in claimed:
            continue
        if before.path in unreadable and before.path not in slugs:
            entities.append(before)  # unreadable now: left as it was
            continue
        reason = ("another entry holds the path" if before.path in slugs else
                  "not an entity (outside every kind folder)" if before.path in present
                  else "note gone")
        dropped.append(_change(before, reason=reason))
    return EntityPlan(tuple(entities), tuple(added), tuple(updated), tuple(dropped))
