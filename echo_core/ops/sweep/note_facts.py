"""Reading every note of the vault once, and what the sweep needs to know of each.

``read_vault(ctx)`` lists the vault with file stats (one walk), reads every markdown
file in batches (``read_many``) and parses each once into ``NoteFacts``; a vault of
``APART_MIN_NOTES`` or more on a storage a forked child may read (``fork_safe_reads``)
has its second half read and parsed on another core (``echo_core.forked_work``: the
same facts either way). A note's facts: the entity it is (``echo_core.note_entities``;
slug left blank), the frontmatter keys it lacks for its kind
(``ops.frontmatter_backfill``) and its text with them added, its ``## Related`` links
and every link it has, whether it expires or is always loaded, and its recall document.
Texts are kept only for notes the sweep will change, so a large vault costs little
memory.
"""

from __future__ import annotations

import datetime as _dt
import functools
import operator
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.corpus import index_doc
from echo_core.entities import content_hash
from echo_core.errors import EchoError
from echo_core.forked_work import start_forked
from echo_core.models import Entity, Note, TreeScan
from echo_core.note_entities import entity_of, kind_folders
from echo_core.notes import parse_note, section_body, wikilinks
from echo_core.ops.always_load import is_always_load
from echo_core.ops.frontmatter_backfill import backfill_frontmatter, missing_frontmatter
from echo_core.ops.index_sync import read_current
from echo_core.ops.links import RELATED_HEADING
from echo_core.protocols import IndexDoc
from echo_core.storage_base import fork_safe_reads
from echo_core.vault_scan import scan_tree

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.routing import RoutingManifest

BATCH = 512
#: A vault of at least this many notes is read in two halves, one per core.
APART_MIN_NOTES = 4096


@attrs.frozen
class NoteFacts:
    """One note as the sweep sees it (module docstring). ``text`` and ``filled`` (the
    text with the missing keys added) are kept only when ``fill`` is not empty."""

    path: str
    entity: Entity | None = None
    fill: dict[str, Any] = attrs.field(factory=dict)
    fill_problem: str = ""
    related: tuple[str, ...] = ()
    links: frozenset[str] = frozenset()
    expires: bool = False
    doc: IndexDoc | None = None
    text: str | None = None
    filled: str | None = None
    digest: str = ""
    always_load: bool = False  # frontmatter ``always_load: true`` (``ops.always_load``)


@attrs.frozen
class VaultFacts:
    """Every markdown note's facts by path, the files that could not be read, and the
    scan of the vault's ``.md`` files they were read after (None: not read by a scan)."""

    notes: dict[str, NoteFacts]
    unreadable: tuple[str, ...] = ()
    scan: TreeScan | None = None


def link_targets(text: str) -> list[str]:
    """The note names ``text``'s wikilinks point at (``#heading`` parts dropped)."""
    return [t.split("#", 1)[0].strip() for t in wikilinks(text)]


_RELATED = re.compile(rf"^## {RELATED_HEADING}[ \t]*\r?$", re.MULTILINE)
_NEXT_HEADING = re.compile(r"^#{1,2}[ \t]", re.MULTILINE)


def related_section(text: str) -> str:
    """The text under ``## Related`` ("" when none). Without a code fence in the note
    a regex finds it (the common case, many times faster); else ``section_body``."""
    if "## " + RELATED_HEADING not in text:
        return ""
    if "```" in text or "~~~" in text:
        return section_body(text, RELATED_HEADING) or ""
    found = _RELATED.search(text)
    if found is None:
        return ""
    end = _NEXT_HEADING.search(text, found.end())
    return text[found.end():end.start() if end else len(text)]


def _mtime_date(mtime_ns: int) -> _dt.date:
    return _dt.date.fromtimestamp(mtime_ns / 1e9)


class _Reader:
    """Turns one note's text into its facts (the per-vault constants bound once)."""

    def __init__(self, ctx: EchoContext) -> None:
        self.manifest: RoutingManifest = ctx.manifest
        self.folders = kind_folders(self.manifest)
        self.today = ctx.today()

    def facts(self, path: str, text: str, mtime_ns: int) -> NoteFacts:
        note = parse_note(path, text)
        entity = entity_of(note, "", self.folders, self.manifest)
        doc = index_doc(note)
        always = "always_load" in text and is_always_load(note.frontmatter)
        if entity is None:
            return NoteFacts(path, doc=doc, digest=content_hash(text), always_load=always)
        related = tuple(link_targets(body)) if (body := related_section(text)) else ()
        links = (frozenset() if "[[" not in text else
                 frozenset(t.split("#", 1)[0].strip() for t in doc.links) if doc is not None
                 and note.frontmatter.get("type") != "daily" and "[[" not in text[:len(text) - len(note.body)]
                 else frozenset(link_targets(text)))
        expires = note.frontmatter.get("expires") not in (None, "")
        fill, problem, filled = self._fill(note, entity.kind, mtime_ns)
        digest = entity.h if note.text is text else content_hash(text)  # h: the same hash
        return NoteFacts(path, entity, fill, problem, related, links,
                         expires or "expires" in fill, doc,
                         text if fill else None, filled, digest, always)

    def _fill(self, note: Note, kind: str, mtime_ns: int) -> tuple[dict[str, Any], str, str | None]:
        """The missing keys, why they cannot be added ("" when they can), the new text."""
        if note.frontmatter_error:
            return {}, f"frontmatter cannot be parsed ({note.frontmatter_error})", None
        fill = missing_frontmatter(note, kind, self.manifest, created=_mtime_date(mtime_ns),
                                   today=self.today)
        if not fill:
            return {}, "", None
        try:
            return fill, "", backfill_frontmatter(note.text, fill)
        except EchoError as exc:
            return {}, f"frontmatter cannot be edited line-wise ({exc.message})", None


def _batches(paths: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(paths), BATCH):
        yield paths[start:start + BATCH]


#: One part of the vault read: facts by path, and the paths that could not be read.
_Part = tuple[dict[str, NoteFacts], list[str]]

_FACT_FIELDS = operator.attrgetter(*(f.name for f in attrs.fields(NoteFacts)))
_ENTITY_FIELDS = operator.attrgetter(*(f.name for f in attrs.fields(Entity)))
_DOC_FIELDS = operator.attrgetter(*(f.name for f in attrs.fields(IndexDoc)))
_ENTITY_AT = [f.name for f in attrs.fields(NoteFacts)].index("entity")
_DOC_AT = [f.name for f in attrs.fields(NoteFacts)].index("doc")


def _packed(facts: NoteFacts) -> tuple[Any, ...]:
    """``facts`` as plain tuples (pickled and unpickled in half the time of the objects)."""
    fields = list(_FACT_FIELDS(facts))
    if facts.entity is not None:
        fields[_ENTITY_AT] = _ENTITY_FIELDS(facts.entity)
    if facts.doc is not None:
        fields[_DOC_AT] = _DOC_FIELDS(facts.doc)
    return tuple(fields)


def _unpacked(fields: tuple[Any, ...]) -> NoteFacts:
    """The ``NoteFacts`` that ``_packed`` gave ``fields`` of."""
    values = list(fields)
    if values[_ENTITY_AT] is not None:
        values[_ENTITY_AT] = Entity(*values[_ENTITY_AT])
    if values[_DOC_AT] is not None:
        values[_DOC_AT] = IndexDoc(*values[_DOC_AT])
    return NoteFacts(*values)


def _read_packed(ctx: EchoContext, reader: _Reader, stamps: Mapping[str, tuple[int, int]],
                 paths: list[str]) -> tuple[list[tuple[Any, ...]], list[str]]:
    """``_read_part``, its facts packed (the forked child's answer)."""
    notes, unreadable = _read_part(ctx, reader, stamps, paths)
    return [_packed(facts) for facts in notes.values()], unreadable


def _read_part(ctx: EchoContext, reader: _Reader, stamps: Mapping[str, tuple[int, int]],
               paths: list[str]) -> _Part:
    notes: dict[str, NoteFacts] = {}
    unreadable: list[str] = []
    for chunk in _batches(paths):
        texts, bad = read_current(ctx, chunk)
        unreadable += bad
        for path, text in texts.items():
            if text is not None:
                notes[path] = reader.facts(path, text, stamps[path][1])
    return notes, unreadable


def read_vault(ctx: EchoContext) -> VaultFacts:
    """Every markdown note's facts, in path order (module docstring)."""
    storage = ctx.vault.storage
    scan = scan_tree(storage, ".md")
    files = scan.files
    paths = sorted(p for p in files if p.endswith(".md"))
    reader = _Reader(ctx)
    if len(paths) < APART_MIN_NOTES or not fork_safe_reads(storage):
        notes, unreadable = _read_part(ctx, reader, files, paths)
        return VaultFacts(notes, tuple(unreadable), scan)
    # every other note to each core: both get as many of each folder's notes
    other = start_forked(functools.partial(_read_packed, ctx, reader, files, paths[1::2]))
    try:
        notes, unreadable = _read_part(ctx, reader, files, paths[0::2])
        more, bad = other.result()
    finally:
        other.cancel()
    notes.update((fields[0], _unpacked(fields)) for fields in more)
    return VaultFacts({p: notes[p] for p in paths if p in notes},
                      tuple(sorted(unreadable + bad)), scan)
