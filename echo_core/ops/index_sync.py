"""Apply notes changed outside echo-memory to both indexes (SPEC §5.1).

``sync_paths(ctx, paths)`` reads each path as it is now and makes the recall index and
the entity index agree with it: a note present is re-indexed for recall and, in a kind's
folder, becomes (or updates) its entity; a note gone is dropped from both. It is what the
fast sweep, the server's watcher and a short-lived process's freshness check call once
they know which notes changed; it never writes a note.

The entity index is written under the vault lock. When the lock cannot be had within
``lock_timeout`` (a long capture in another process), the entity part is skipped and
the result says so (``entities_pending``), so the caller can try those paths again later
rather than record them as done.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import attrs

from echo_core.errors import EchoError, ExitCode
from echo_core.lazy_log import lazy_logger
from echo_core.models import Entity
from echo_core.note_entities import entity_of_text, file_stem, kind_folders, unique_slug
from echo_core.notes import parse_note
from echo_core.ops.always_load import track_changes
from echo_core.protocols import BackendUnavailable

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.entities import EntityIndex

log = lazy_logger("echo_memory")

#: Up to this many notes, the entity diff is computed once without the vault lock first
#: (no lock taken when nothing changes); a larger batch goes straight to the lock.
PRECHECK_MAX = 64


@attrs.frozen
class IndexSync:
    """What ``sync_paths`` changed in the indexes."""

    reindexed: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    entities_put: tuple[str, ...] = ()
    entities_removed: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = ()
    entities_pending: bool = False

    @property
    def changed(self) -> int:
        """How many index changes were made."""
        return (len(self.reindexed) + len(self.dropped) + len(self.entities_put)
                + len(self.entities_removed))


def read_current(ctx: EchoContext, paths: Sequence[str]) -> tuple[dict[str, str | None], list[str]]:
    """The texts of ``paths`` now (None: gone), and the paths that could not be read
    (not UTF-8, or failing alone): those are left as they are in both indexes."""
    storage = ctx.vault.storage
    try:
        return dict(storage.read_many(paths)), []
    except BackendUnavailable:
        raise
    except (EchoError, UnicodeError):  # one bad file: read them one by one
        pass
    texts: dict[str, str | None] = {}
    bad: list[str] = []
    for path in paths:
        try:
            texts[path] = storage.read(path)
        except BackendUnavailable:
            raise
        except EchoError as exc:
            if exc.code == ExitCode.NOT_FOUND:
                texts[path] = None
            else:
                bad.append(path)
        except UnicodeError:
            bad.append(path)
    return texts, bad


def sync_paths(ctx: EchoContext, paths: Iterable[str], *, lock_timeout: float = 5.0,
               texts: dict[str, str | None] | None = None, recall: bool = True) -> IndexSync:
    """Make both indexes agree with the notes at ``paths`` as they are now (``texts``
    when the caller already read them: path -> text, None for a note gone); with
    ``recall=False`` only the entity index (the caller rebuilt the recall index)."""
    wanted = sorted(dict.fromkeys(p for p in paths if p.endswith(".md")))
    bad: list[str] = []
    if texts is None:
        texts, bad = read_current(ctx, wanted)
    else:
        texts = {p: texts.get(p) for p in wanted}
    reindexed, dropped = _sync_recall(ctx, texts) if recall else ([], [])
    track_changes(ctx.state_dir, texts, ctx.today())
    try:
        put, removed = _sync_entities(ctx, texts, lock_timeout)
        pending = False
    except EchoError as exc:
        if exc.code != ExitCode.LOCK_HELD:
            raise
        log.info("entity index not synced now (%s); the next check retries", exc.message)
        put, removed, pending = [], [], True
    return IndexSync(tuple(reindexed), tuple(dropped), tuple(put), tuple(removed),
                     tuple(bad), pending)


def _sync_recall(ctx: EchoContext, texts: dict[str, str | None]) -> tuple[list[str], list[str]]:
    """Upsert present notes, remove gone ones (a failing ranker is logged: the index is
    a shadow, ``reindex`` rebuilds it)."""
    try:
        upkeep = ctx.ranker_upkeep
    except EchoError as exc:
        log.debug("recall index not synced: %s", exc.message)
        return [], []
    notes = []
    for path, text in texts.items():
        if text is not None:
            try:
                notes.append(parse_note(path, text))
            except Exception:  # noqa: BLE001 - one note never stops the others
                log.warning("recall index: %s was not re-indexed (unparsable)", path)
    dropped = [p for p, t in texts.items() if t is None]
    try:
        upkeep.notes_changed(notes, dropped)
    except Exception:
        log.warning("recall index: %d changed notes were not re-indexed (run `echo-memory "
                    "reindex`)", len(notes) + len(dropped), exc_info=True)
        return [], []
    return [n.path for n in notes], dropped


def entity_changes(index: EntityIndex, texts: dict[str, str | None],
                   ctx: EchoContext) -> tuple[list[Entity], list[str]]:
    """The puts and deletes that make ``index`` agree with ``texts`` (path -> text, None
    for gone): pure, so the full sweep can report them before applying. The slug of a
    note gone in ``texts`` is free for a new one there: a note a person moved or renamed
    keeps its slug (``a/x.md`` gone and ``b/x.md`` new: ``x`` is put again with the new
    path, not ``x-2``), and a slug put again is not also deleted (a put replaces)."""
    folders = kind_folders(ctx.manifest)
    puts: list[Entity] = []
    deletes: list[str] = []
    claimed: set[str] = set()
    freed = {gone.slug for path, text in texts.items()
             if text is None and (gone := index.by_path(path)) is not None}

    def taken(slug: str) -> bool:
        return slug in claimed or (slug not in freed and index.get(slug) is not None)

    for path, text in sorted(texts.items()):
        existing = index.by_path(path)
        if text is None:
            if existing is not None:
                deletes.append(existing.slug)
            continue
        slug = existing.slug if existing is not None else unique_slug(path, taken)
        entity = entity_of_text(path, text, slug, folders, ctx.manifest)
        if entity is None:
            if existing is not None:
                deletes.append(existing.slug)
        elif entity != existing:
            claimed.add(slug)
            puts.append(entity)
    return puts, [slug for slug in deletes if slug not in claimed]


class _NamesView:
    """What ``entity_changes`` looks up (``by_path``, ``get``), answered from the name
    cache for the paths at hand: no full index is built, however large."""

    def __init__(self, ctx: EchoContext, paths: Iterable[str]) -> None:
        self._names = ctx.entity_names
        self._by_path = self._names.by_paths(paths)
        self._stems = {file_stem(p) for p in paths}
        self._taken = set(self._names.get_many(self._stems))

    def by_path(self, path: str) -> Entity | None:
        return self._by_path.get(path)

    def get(self, slug: str) -> Entity | None:
        if slug in self._stems and slug not in self._taken:
            return None  # asked already, in one query for all the stems
        return self._names.get(slug)


def _sync_entities(ctx: EchoContext, texts: dict[str, str | None],
                   lock_timeout: float) -> tuple[list[str], list[str]]:
    """Apply ``entity_changes`` under the vault lock (looked up in the name cache, and
    looked up again under the lock: another process may have changed the index); the
    slugs put and removed."""
    if len(texts) <= PRECHECK_MAX:  # most syncs change no entity: look before locking
        puts, deletes = entity_changes(_NamesView(ctx, texts), texts, ctx)  # type: ignore[arg-type]
        if not puts and not deletes:
            return [], []
    with ctx.vault.storage.lock(timeout=lock_timeout):
        puts, deletes = entity_changes(_NamesView(ctx, texts), texts, ctx)  # type: ignore[arg-type]
        ctx.entities.append(puts, deletes)
    return [e.slug for e in puts], deletes
