"""How a capture's messages name things: its arguments as the caller writes them (a
gate stop's ways forward) and the names an alias may not take (SPEC §2.1, §2.2)."""

from __future__ import annotations

import json
from collections.abc import Iterable

import attrs

from echo_core.entities import EntityIndex
from echo_core.errors import usage_error
from echo_core.models import Entity, GateStop
from echo_core.names import name_key


@attrs.frozen
class ArgumentNames:
    """How capture's messages name its arguments: as the caller writes them. ``flags``:
    the CLI's ``--merge-into SLUG`` / ``--force``; otherwise the argument names of MCP
    and ``invoke`` (``merge_into="slug"`` / ``force=true``)."""

    flags: bool = False

    def merge_into(self, slug: str) -> str:
        """How to ask for an update of ``slug``."""
        return f"--merge-into {slug}" if self.flags else f"merge_into={json.dumps(slug)}"

    def force(self) -> str:
        """How to ask for a new note past the gate."""
        return "--force" if self.flags else "force=true"


ARGUMENT_NAMES = ArgumentNames()
CLI_FLAGS = ArgumentNames(flags=True)


def gate_message(stop: GateStop, kind: str, names: ArgumentNames) -> str:
    """A gate stop's reason and the two ways forward, named as the caller writes them."""
    top = stop.candidates[0].get("slug") if stop.candidates else None
    merge = (f"to add to it, capture again with {names.merge_into(str(top))}; "
             if top else "")
    return (f"{stop.reason}. Not saved: {merge}if it really is a different {kind}, capture "
            f"again with {names.force()}")


def refuse_taken_aliases(index: EntityIndex, aliases: Iterable[str], owner: Entity | None,
                         names: ArgumentNames) -> None:
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
                   f"names ({owner.title!r}, with {names.merge_into(owner.slug)}); to add to "
                   f"the other note, use {names.merge_into(other.slug)}")
        else:
            way = f"leave that alias out, or add to that note with {names.merge_into(other.slug)}"
        raise usage_error(f"alias {alias!r} already names {other.kind} {other.title!r} "
                          f"({other.path}); one name points to one note: {way}")
