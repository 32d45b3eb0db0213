"""How a capture's messages name things: its arguments as the caller writes them (a
gate stop's ways forward) and the names an alias may not take (SPEC §2.1, §2.2)."""

from __future__ import annotations

from collections.abc import Iterable

from echo_core.errors import usage_error
from echo_core.models import Entity, GateStop
from echo_core.names import name_key
from echo_core.operations.spelling import spell
from echo_core.protocols import EntityLookup


def gate_message(stop: GateStop, kind: str) -> str:
    """A gate stop's reason and the two ways forward, named as the caller writes them
    (``--merge-into SLUG`` on the CLI, ``merge_into: "slug"`` over MCP: ``spell``)."""
    top = stop.candidates[0].get("slug") if stop.candidates else None
    merge = (f"to add to it, capture again with {spell('merge_into', str(top))}; "
             if top else "")
    return (f"{stop.reason}. Not saved: {merge}if it really is a different {kind}, capture "
            f"again with {spell('force')}")


def refuse_taken_aliases(index: EntityLookup, aliases: Iterable[str],
                         owner: Entity | None) -> None:
    """``EchoError`` (2) when one of ``aliases`` already names another entity than
    ``owner`` (None: a new entity) by its slug, title or an alias, of any kind: one name
    points to one note, or resolve and the gate could not tell them apart."""
    for alias in aliases:
        key = name_key(alias)
        other = next((e for e in index.exact(alias)
                      if owner is None or e.slug != owner.slug), None) if key else None
        if other is None:
            continue
        if owner is not None:
            way = (f"to add to {owner.slug} without the alias, capture under one of its own "
                   f"names ({owner.title!r}, with {spell('merge_into', owner.slug)}); to add to "
                   f"the other note, use {spell('merge_into', other.slug)}")
        else:
            way = ("leave that alias out, or add to that note with "
                   f"{spell('merge_into', other.slug)}")
        raise usage_error(f"alias {alias!r} already names {other.kind} {other.title!r} "
                          f"({other.path}); one name points to one note: {way}")


def one_target(title: str, kind: str, matches: list[Entity]) -> Entity:
    """The one entity of ``matches`` (those of ``kind`` whose title or alias ``title``
    is) a capture updates; ``EchoError`` (2) when there are several: the name is
    ambiguous and a capture never picks one of them (``resolve`` answers ambiguous, inbox
    review keeps such an item waiting), so nothing is written until a slug says which."""
    if len(matches) == 1:
        return matches[0]
    several = sorted(matches, key=lambda e: e.slug)
    names = ", ".join(f"{e.slug} ({e.title!r}, {e.path})" for e in several)
    raise usage_error(
        f"{title!r} is ambiguous: it names {len(several)} entities of kind {kind} ({names}). "
        f"Not saved: say which with its slug, e.g. {spell('merge_into', several[0].slug)}; "
        f"if it is another {kind} again, capture with {spell('force')} (a new note)")
