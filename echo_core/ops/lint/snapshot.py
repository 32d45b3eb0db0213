"""One read of the whole vault, shared by every lint check.

``read_snapshot(ctx)`` lists the vault once (sizes and mtimes), reads every markdown
note once and parses it once; the checks then work on these parsed notes and never
touch the storage. What several checks need (each note's links, where a link points,
which notes are linked to) is computed once, on first use.
"""

from __future__ import annotations

import datetime as _dt
import functools
import weakref
from typing import TYPE_CHECKING, Any

from echo_core.entities import EntityIndex
from echo_core.errors import EchoError
from echo_core.models import Entity, Note
from echo_core.names import name_key
from echo_core.note_entities import entity_as, file_stem, folder_kind, kind_folders, note_kind
from echo_core.notes import parse_note, wikilinks
from echo_core.ops.frontmatter_backfill import missing_frontmatter
from echo_core.ops.index_sync import read_current
from echo_core.ops.lint.resolver import LinkResolver
from echo_core.protocols import BackendUnavailable
from echo_core.routing import RoutingManifest
from echo_core.vault_scan import scan_tree

if TYPE_CHECKING:
    from echo_core.context import EchoContext

#: Notes of SPEC §1.1 that init writes into a kind folder: part of the memory's own
#: layout, so never reported as orphans or as entities missing from the index.
SYSTEM_NOTES = frozenset({"_agent/memory/semantic/operator-preferences.md"})
#: Folders whose notes are patterns, not notes: their links are placeholders.
NOT_CHECKED_FOR_LINKS = ("templates/",)
_READ_BATCH = 2048


class VaultSnapshot:
    """The vault as lint sees it: every file's stat, every note parsed, the stored
    entity index (None with ``index_error`` when it cannot be read), the manifest and
    today's date."""

    def __init__(self, *, files: dict[str, tuple[int, int]], notes: dict[str, Note],
                 manifest: RoutingManifest, today: _dt.date,
                 index: EntityIndex | None, index_error: str = "",
                 unreadable: tuple[str, ...] = ()) -> None:
        self.files = files
        self.notes = notes
        self.manifest = manifest
        self.today = today
        self.index = index
        self.index_error = index_error
        self.unreadable = unreadable
        self.folders = kind_folders(manifest)
        self._missing: dict[str, dict[str, Any]] = {}

    @functools.cached_property
    def kinds(self) -> dict[str, str]:
        """Entity note path -> its kind (every note in a kind's folder; ``note_kind``,
        with the folder looked up once per folder, not once per note)."""
        out: dict[str, str] = {}
        by_folder: dict[str, dict[str, str]] = {}
        for path, note in self.notes.items():
            folder = path.rpartition("/")[0]
            own = by_folder.get(folder)
            if own is None:
                kind = folder_kind(folder + "/note.md", self.folders)
                by_folder[folder] = own = {folder: kind} if kind is not None else {}
            if own:
                found = note_kind(note, own, self.manifest)
                if found is not None:
                    out[path] = found
        return out

    def missing(self, path: str) -> dict[str, Any]:
        """The frontmatter the entity note at ``path`` lacks for its kind
        (``missing_frontmatter``; created/updated would get the file's date)."""
        cached = self._missing.get(path)
        if cached is None:
            cached = self._missing[path] = missing_frontmatter(
                self.notes[path], self.kinds[path], self.manifest,
                created=self.mtime_date(path), today=self.today)
        return cached

    @functools.cached_property
    def links(self) -> dict[str, tuple[str, ...]]:
        """Note path -> the targets of its wikilinks (code ignored; none for templates)."""
        return {path: tuple(wikilinks(note.body)) if "[[" in note.body else ()
                for path, note in self.notes.items()
                if not path.startswith(NOT_CHECKED_FOR_LINKS)}

    @functools.cached_property
    def derived(self) -> dict[str, Entity]:
        """Entity note path -> the entity it describes, as a sweep would derive it (its
        slug: the index's for a path the index knows, else the file stem; its content
        hash left blank: no check compares it)."""
        out: dict[str, Entity] = {}
        by_path = self.index.by_path if self.index is not None else lambda _path: None
        for path, kind in self.kinds.items():
            known = by_path(path)
            slug = known.slug if known is not None else file_stem(path)
            out[path] = entity_as(self.notes[path], slug, kind, hashed=False)
        return out

    @functools.cached_property
    def resolver(self) -> LinkResolver:
        """Where a link target points (paths, file names, entity names). The resolver
        holds the snapshot weakly: no reference cycle, so a finished lint's snapshot is
        freed at once, without waiting for (or costing) a garbage collector pass."""
        snapshot = weakref.ref(self)

        def entity_names() -> dict[str, set[str]]:
            alive = snapshot()
            return alive._entity_names() if alive is not None else {}

        return LinkResolver(self.files, entity_names)

    def _entity_names(self) -> dict[str, set[str]]:
        """Name key -> entity note paths: the slug, title and aliases of every entity
        derived from the notes, and the names the stored index gives notes that exist."""
        names: dict[str, set[str]] = {}
        for path, entity in self.derived.items():
            for name in (entity.slug, entity.title, *entity.aliases):
                key = name_key(name)
                if key:
                    names.setdefault(key, set()).add(path)
        if self.index is not None:
            for key, slugs in self.index.names_by_key().items():
                for slug in slugs:
                    stored = self.index.get(slug)
                    if stored is not None and stored.path in self.notes:
                        names.setdefault(key, set()).add(stored.path)
        return names

    @functools.cached_property
    def linked_to(self) -> frozenset[str]:
        """Paths some other note links to (any link that resolves to them)."""
        found: set[str] = set()
        resolve = self.resolver.resolve
        for path, targets in self.links.items():
            for target in targets:
                found.update(p for p in resolve(target) if p != path)
        return frozenset(found)

    def mtime_date(self, path: str) -> _dt.date:
        """The date of the file's last change (today when unknown)."""
        stat = self.files.get(path)
        if stat is None:
            return self.today
        return _dt.datetime.fromtimestamp(stat[1] / 1e9).date()


def read_snapshot(ctx: EchoContext) -> VaultSnapshot:
    """List and read the whole vault once (see the module docstring). A note that cannot
    be read (not UTF-8) is listed in ``unreadable`` and left out of the checks."""
    files = scan_tree(ctx.vault.storage).files
    md = sorted(p for p in files if p.endswith(".md"))
    notes: dict[str, Note] = {}
    unreadable: list[str] = []
    for start in range(0, len(md), _READ_BATCH):
        texts, bad = read_current(ctx, md[start:start + _READ_BATCH])
        unreadable.extend(bad)
        for path, text in texts.items():
            if text is not None:
                notes[path] = parse_note(path, text)
    index: EntityIndex | None = None
    error = ""
    try:
        index = ctx.entities.load()
    except BackendUnavailable:
        raise
    except EchoError as exc:
        error = exc.message
    return VaultSnapshot(files=files, notes=notes, manifest=ctx.manifest, today=ctx.today(),
                         index=index, index_error=error, unreadable=tuple(unreadable))
