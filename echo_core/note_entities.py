"""Which notes are entities, and the entity a note describes (SPEC §5.1).

Every note in a kind's folder is an entity, whoever wrote it (capture, ``put``, a person
in Obsidian, an import): its kind is the frontmatter ``type`` when that names a kind, else
the folder's; its title is the first ``# `` heading, else the file name; its aliases are
the frontmatter ``aliases`` (a list or one string; Obsidian's ``alias`` too). The slug of
a note that is not in the index yet is its file name without ``.md``, made unique with
``-2``, ``-3``... when another note already holds it (``unique_slug``).

Pure functions over paths and texts: the fast sweep, the full sweep, live freshness and
lint share them, so every path to the entity index derives entities the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from echo_core.entities import content_hash
from echo_core.models import Entity, Note
from echo_core.notes import parse_note
from echo_core.routing import RoutingManifest

#: Files in a kind's folder that are never entities (the folder's own description).
NOT_ENTITIES = ("readme.md",)
#: Frontmatter keys that together mark a part of an ingested document
#: (``echo_core.ops.ingest_notes``): a piece of the document note's text, not a thing of
#: its own, so never an entity (its title contains the document's: every part would look
#: like a duplicate of it).
PART_KEYS = ("part_of", "ingest_hash")


def kind_folders(manifest: RoutingManifest) -> dict[str, str]:
    """Every folder that holds entities -> the kind living there, the longest folders
    first (so a nested kind folder wins over its parent)."""
    found: dict[str, str] = {}
    for route in manifest.kinds.values():
        folders = ([route.folder_for(d) for d in manifest.area_domains]
                   if "{domain}" in route.folder else [route.folder])
        for folder in (*folders, *route.also_in):
            found.setdefault(folder, route.kind)
    return dict(sorted(found.items(), key=lambda item: (-len(item[0]), item[0])))


def folder_kind(path: str, folders: dict[str, str]) -> str | None:
    """The kind whose folder (or a sub-folder of it) holds the note at ``path``; None for a
    path outside every kind folder, a non-markdown file, or a folder README."""
    if not path.endswith(".md") or path.rsplit("/", 1)[-1].casefold() in NOT_ENTITIES:
        return None
    for folder, kind in folders.items():
        if path.startswith(folder + "/"):
            return kind
    return None


def note_aliases(frontmatter: dict[str, Any]) -> tuple[str, ...]:
    """The note's aliases: frontmatter ``aliases`` (or Obsidian's older ``alias``), a list
    or one string; blanks and repeats dropped, order kept."""
    raw = frontmatter.get("aliases")
    if raw is None:
        raw = frontmatter.get("alias")
    items = raw if isinstance(raw, list) else [raw] if raw is not None else []
    seen: dict[str, None] = {}
    for item in items:
        if isinstance(item, (str, int, float)) and not isinstance(item, bool):
            text = str(item).strip()
            if text:
                seen.setdefault(text, None)
    return tuple(seen)


def note_kind(note: Note, folders: dict[str, str], manifest: RoutingManifest) -> str | None:
    """The kind of the entity ``note`` is, or None when it is not an entity (outside
    every kind folder, or a part of an ingested document: ``PART_KEYS``). Frontmatter
    ``type`` wins when it names a kind."""
    by_folder = folder_kind(note.path, folders)
    if by_folder is None:
        return None
    fm = note.frontmatter
    if all(key in fm for key in PART_KEYS):
        return None
    declared = fm.get("type")
    if isinstance(declared, str) and declared.strip() in manifest.kinds:
        return declared.strip()
    return by_folder


def file_stem(path: str) -> str:
    """The note's file name without ``.md``."""
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def entity_of(note: Note, slug: str, folders: dict[str, str],
              manifest: RoutingManifest) -> Entity | None:
    """The entity ``note`` describes under ``slug``, or None when it is not an entity."""
    kind = note_kind(note, folders, manifest)
    if kind is None:
        return None
    return entity_as(note, slug, kind)


def entity_as(note: Note, slug: str, kind: str, *, hashed: bool = True) -> Entity:
    """The entity ``note`` describes as a ``kind`` under ``slug``; ``hashed=False`` leaves
    its content hash ``h`` blank (for a caller that never compares it)."""
    title = note.title.strip() or file_stem(note.path)
    aliases = tuple(a for a in note_aliases(note.frontmatter) if a != title)
    return Entity(slug=slug, path=note.path, kind=kind, title=title, aliases=aliases,
                  h=content_hash(note.text) if hashed else "")


def entity_of_text(path: str, text: str, slug: str, folders: dict[str, str],
                   manifest: RoutingManifest) -> Entity | None:
    """``entity_of`` for a note's raw text."""
    return entity_of(parse_note(path, text), slug, folders, manifest)


def unique_slug(path: str, taken: Callable[[str], bool]) -> str:
    """The slug for a note the index does not know yet: its file stem, or the first of
    ``stem-2``, ``stem-3``... that ``taken`` says is free."""
    stem = file_stem(path)
    slug, n = stem, 1
    while taken(slug):
        n += 1
        slug = f"{stem}-{n}"
    return slug
