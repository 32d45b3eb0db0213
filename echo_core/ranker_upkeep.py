"""The core keeps the active ranker (config ``recall``) current; a ranker only ranks.

Two kinds of ranker (``echo_core.protocols``):

* a ``PersistentRanker`` keeps its own files in the state dir, shared by every process of
  the vault. Each context opens its own instance; the core upserts / removes on every note
  write and deletion, and ``ops.recall_index.ensure_index`` rebuilds it when its
  ``needs_rebuild()`` says so.
* a plain ``Ranker`` lives in memory. One instance per process and ranker folder
  (``SharedRanker``), shared by every context of the process (the MCP server's worker
  threads). It is built from the corpus on first use (every search calls
  ``ensure_current``), kept current by this process's note events, and, before each
  search, catches up with the notes other processes changed (``ranker_changes``). Calls
  into it are serialised by a lock, so it need not be thread-safe.

A write made before the first search is not lost: until the shared ranker is built, note
events skip it (under the same lock the build holds), and the build reads the corpus after
the write is durable; after the build they upsert. ``upsert`` is idempotent by path, so a
note is never indexed twice either way.

The ranker is a plugin's object, so its faults are contained (``ranker_faults``): a
failing ``upsert`` / ``remove`` never fails the write (warned, and the ranker marked for
a rebuild: ``ranker_marks``, or a plain one rebuilt before its next search); a failing
build or ``search`` raises ``RankerFailed`` naming it; ``search`` results are checked
into the documented shape. While ``bm25`` stands in for a configured ranker that cannot
run (``ranker_choice``), each write marks that one for a rebuild and is logged for
other processes' plain rankers, so it catches up once it runs again.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import cast

from echo_core.corpus import in_corpus, index_doc
from echo_core.corpus_docs import iter_corpus
from echo_core.lazy_log import lazy_logger
from echo_core.models import Note
from echo_core.notes import parse_note
from echo_core.protocols import (
    IndexDoc,
    KeyFieldRanker,
    PersistentRanker,
    Ranker,
    Storage,
    TextRanker,
    WeightedTerm,
    offers,
)
from echo_core.ranker_changes import LogMark, NoteChangeLog
from echo_core.ranker_choice import take_stand_in
from echo_core.ranker_faults import checked_hits, fault_text, guarded, report
from echo_core.ranker_marks import mark_stale

log = lazy_logger("echo_memory")

#: Builds a fresh ranker of the active kind (the factory bound to tokenizer and folder).
MakeRanker = Callable[[], Ranker]


class CorpusSource:
    """The vault's corpus as documents: all of them, or those of some paths."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def all(self, on_error: Callable[[str, Exception], None] | None = None,
            ) -> Iterator[IndexDoc]:
        """Every corpus document (unreadable notes passed to ``on_error``, else logged)."""
        return iter_corpus(self.storage, on_error=on_error or _log_skipped)

    def some(self, paths: Sequence[str]) -> dict[str, IndexDoc | None]:
        """The documents of ``paths`` now: None for a note gone, unreadable or outside
        the corpus (the ranker then forgets the path)."""
        wanted = [p for p in paths if in_corpus(p)]
        found: dict[str, IndexDoc | None] = dict.fromkeys(paths)
        for path, text in (self.storage.read_many(wanted) if wanted else {}).items():
            if text is not None:
                try:
                    found[path] = index_doc(parse_note(path, text))
                except Exception as exc:  # noqa: BLE001 - one bad note never stops a catch-up
                    _log_skipped(path, exc)
        return found


def _log_skipped(path: str, exc: Exception) -> None:
    log.warning("recall index: skipped unreadable note %s (%s)", path, exc)


class SharedRanker:
    """The process's one plain (in-memory) ranker for a ranker folder.

    Built from the corpus once, then kept current by this process's note events and,
    before each search, by the notes other processes changed (``NoteChangeLog``). One
    re-entrant lock serialises the build, the catch-up, ``upsert``, ``remove`` and
    ``search``.
    """

    def __init__(self, ranker: Ranker, make: MakeRanker, corpus: CorpusSource,
                 changes: NoteChangeLog) -> None:
        self.ranker = ranker
        self.built = False
        self._make = make
        self._corpus = corpus
        self._changes = changes
        self._mark = LogMark()
        self._lock = threading.RLock()
        #: A change failed to apply: rebuilt from the corpus before the next search.
        self.stale = False

    def ensure_current(self) -> bool:
        """Build from the corpus unless already built in this process (True when it
        ran); else re-index the notes other processes changed since the last look."""
        with self._lock:
            if not self.built:  # the ranker ``make`` gave first: fresh, so fill it
                self._fill(self.ranker, self._corpus.all())
                return True
            paths, mark = self._changes.read_since(self._mark)
            if paths is None or self.stale:  # the log was replaced, or a change failed
                self.rebuild(self._corpus.all())
                return True
            self._mark = mark
            try:
                for path, doc in (self._corpus.some(paths) if paths else {}).items():
                    self._apply(path, doc)
            except Exception:
                self.stale = True  # those changes are past the mark: rebuild next time
                raise
            return False

    def rebuild(self, docs: Iterable[IndexDoc], progress: Callable[[int], None] | None = None,
                every: int = 500) -> int:
        """Replace the ranker by a fresh one holding exactly ``docs``; the count indexed.

        A factory that hands back the same object has every path it knows (``paths()``,
        when it has one) removed first."""
        with self._lock:
            fresh = self._make()
            take_stand_in()  # a stand-in built here is this ranker's, not a context's
            if fresh is self.ranker:
                for path in _indexed_paths(fresh):
                    fresh.remove(path)
            return self._fill(fresh, docs, progress, every)

    def _fill(self, target: Ranker, docs: Iterable[IndexDoc],
              progress: Callable[[int], None] | None = None, every: int = 500) -> int:
        """Upsert ``docs`` into ``target`` and make it the built ranker (lock held)."""
        mark = self._changes.mark()  # changes from now on are caught up later
        count = 0
        for doc in docs:
            target.upsert(doc)
            count += 1
            if progress and count % every == 0:
                progress(count)
        self.ranker, self.built, self._mark, self.stale = target, True, mark, False
        return count

    def note_changed(self, path: str, doc: IndexDoc | None) -> None:
        """This process wrote (``doc``) or deleted / dropped (None) the note at ``path``:
        apply it once built (before, the build will read it) and tell other processes
        (told even when applying it failed: then this ranker is ``stale`` and the
        exception propagates)."""
        try:
            with self._lock:
                if self.built:
                    try:
                        self._apply(path, doc)
                    except Exception:
                        self.stale = True
                        raise
        finally:
            self.log_change(path)

    def log_change(self, path: str) -> None:
        """Tell other processes that the note at ``path`` changed."""
        try:
            self._changes.append(path)
        except OSError as exc:
            log.warning("recall index: other processes will see %s only after they restart "
                        "(cannot append to %s: %s)", path, self._changes.path, exc)

    def _apply(self, path: str, doc: IndexDoc | None) -> None:
        if doc is None:
            self.ranker.remove(path)
        else:
            self.ranker.upsert(doc)

    def search(self, terms: Sequence[WeightedTerm], limit: int,
               query: str = "") -> list[tuple[str, float]]:
        """The ranker's ``search`` (``search_text`` for a ``TextRanker`` given the
        ``query``), under the lock (call ``ensure_current`` first)."""
        with self._lock:
            return _searched(self.ranker, terms, limit, query)


def _searched(ranker: Ranker, terms: Sequence[WeightedTerm], limit: int,
              query: str) -> list[tuple[str, float]]:
    if query and offers(ranker, TextRanker):
        return cast(TextRanker, ranker).search_text(query, terms, limit)
    return ranker.search(terms, limit)


def _indexed_paths(ranker: object) -> list[str]:
    paths = getattr(ranker, "paths", None)
    return list(paths()) if callable(paths) else []


_SHARED: dict[Hashable, SharedRanker] = {}
_SHARED_GUARD = threading.Lock()


class RankerUpkeep:
    """The active ranker of one context, and the core's upkeep of it.

    ``ranker`` is the object to search (for a plain ranker: the process's shared one,
    which ``reindex`` may replace). ``note_written`` / ``note_deleted`` keep it current
    and never raise (a failure is warned and the ranker marked for a rebuild);
    ``search`` builds a plain ranker on first use, serialises calls into it and checks
    what it returns. ``folder`` is the ranker folder (marks live beside it);
    ``stands_in_for`` the configured ranker this one (``bm25``) answers for.
    """

    def __init__(self, persistent: PersistentRanker | None = None,
                 shared: SharedRanker | None = None, *,
                 folder: str | os.PathLike[str] | None = None, stands_in_for: str = "") -> None:
        if (persistent is None) == (shared is None):
            raise ValueError("RankerUpkeep takes exactly one of persistent= or shared=")
        self.persistent = persistent
        self.shared = shared
        #: The registered name of the ranker in use (set by the context that opened it).
        self.name = ""
        self.folder = folder
        self.stands_in_for = stands_in_for

    @property
    def ranker(self) -> Ranker:
        """The ranker to search now."""
        if self.persistent is not None:
            return self.persistent
        assert self.shared is not None
        return self.shared.ranker

    def note_written(self, note: Note) -> None:
        """Upsert ``index_doc(note)``, or remove the path when the note left the corpus."""
        doc = index_doc(note)
        if self.shared is not None:
            self._kept([note.path], lambda: self._shared().note_changed(note.path, doc))
        elif doc is None:
            self._kept([note.path], lambda: self._persistent().remove(note.path))
        else:
            self._kept([note.path], lambda: self._persistent().upsert(doc))

    def note_deleted(self, path: str) -> None:
        """Remove ``path`` (a no-op when it was never indexed)."""
        if self.shared is not None:
            self._kept([path], lambda: self._shared().note_changed(path, None))
        else:
            self._kept([path], lambda: self._persistent().remove(path))

    def notes_changed(self, written: Sequence[Note], deleted: Sequence[str]) -> None:
        """``note_written`` for each of ``written`` and ``note_deleted`` for each of
        ``deleted``; a persistent ranker offering ``upsert_many`` / ``remove_many`` gets
        them in one call each (one commit for a sweep's changes)."""
        ranker = self.persistent
        batch_upsert = getattr(ranker, "upsert_many", None)
        batch_remove = getattr(ranker, "remove_many", None)
        if ranker is None or not callable(batch_upsert) or not callable(batch_remove):
            for note in written:
                self.note_written(note)
            for path in deleted:
                self.note_deleted(path)
            return
        docs, gone = [], list(deleted)
        for note in written:
            doc = index_doc(note)
            if doc is None:
                gone.append(note.path)
            else:
                docs.append(doc)

        def apply() -> None:
            batch_remove(gone)
            batch_upsert(docs)

        self._kept([*gone, *(d.path for d in docs)], apply)

    def _kept(self, paths: Sequence[str], change: Callable[[], None]) -> None:
        """Run ``change``; on failure warn, log and mark the ranker for a rebuild (a
        plain one is ``stale`` already), never raise: the write it follows stands."""
        try:
            change()
        except Exception as exc:  # noqa: BLE001 - a plugin's fault never fails a write
            if self.folder is not None and self.persistent is not None:
                mark_stale(self.folder, self.name)
            count = f"{len(paths)} note changes" if len(paths) != 1 else "a note change"
            report(fault_text(self.name, self.ranker, "indexing " + count
                              + " (it was not indexed)", exc))
            return
        if self.stands_in_for and self.folder is not None:
            mark_stale(self.folder, self.stands_in_for)
            if self.persistent is not None:  # a shared ranker has logged them already
                changes = NoteChangeLog(self.folder)
                for path in paths:
                    with contextlib.suppress(OSError):
                        changes.append(path)

    def ensure_current(self) -> bool:
        """Make a plain ranker current (built once per process, then caught up with other
        processes' changes); True when a build ran. A persistent ranker is left to
        ``ops.recall_index.ensure_index`` (its ``needs_rebuild``): False."""
        if self.shared is None:
            return False
        with guarded(self.name, self.shared.ranker, "while being built from the notes"):
            return self.shared.ensure_current()

    def search(self, terms: Sequence[WeightedTerm], limit: int,
               query: str = "") -> list[tuple[str, float]]:
        """Search the active ranker (a plain one made current first); a ``TextRanker``
        given the ``query`` as written gets it through ``search_text``. The answer is
        checked into the documented shape (``ranker_faults.checked_hits``)."""
        if self.shared is None:
            ranker: Ranker = self._persistent()
            with guarded(self.name, ranker, "in search"):
                found: object = _searched(ranker, terms, limit, query)
        else:
            self.ensure_current()
            ranker = self.shared.ranker
            with guarded(self.name, ranker, "in search"):
                found = self.shared.search(terms, limit, query)
        return checked_hits(self.name, ranker, found, limit)

    def key_terms_of(self, paths: Sequence[str], terms: Sequence[str]
                     ) -> dict[str, frozenset[str]] | None:
        """The active ranker's ``key_terms_of`` (``KeyFieldRanker``: which of ``terms``
        each of ``paths`` holds in its title or aliases, as indexed); None when it keeps
        no key fields (a plain ranker, or one without them)."""
        ranker = self.persistent
        if ranker is None or not offers(ranker, KeyFieldRanker):
            return None
        with guarded(self.name, ranker, "in key_terms_of"):
            return cast(KeyFieldRanker, ranker).key_terms_of(paths, terms)

    def _persistent(self) -> PersistentRanker:
        assert self.persistent is not None
        return self.persistent

    def _shared(self) -> SharedRanker:
        assert self.shared is not None
        return self.shared


def open_ranker(key: Hashable, make: MakeRanker, storage: Storage,
                folder: str | os.PathLike[str]) -> RankerUpkeep:
    """The upkeep of the ranker ``make`` builds, for the ranker folder ``key`` names.

    A plain ranker already made in this process for ``key`` is reused without calling
    ``make``; otherwise ``make()`` is called once: a ``PersistentRanker`` is this
    context's own, a plain one becomes the process's shared ranker for ``key``, built
    from ``storage``'s corpus and caught up through the change log in ``folder``. When
    ``bm25`` stood in for the configured ranker (``ranker_choice.take_stand_in``), the
    upkeep marks that one on every write.
    """
    with _SHARED_GUARD:
        shared = _SHARED.get(key)
    if shared is None:
        ranker = make()
        stand_in = take_stand_in()
        if isinstance(ranker, PersistentRanker):
            return RankerUpkeep(persistent=ranker, folder=folder, stands_in_for=stand_in)
        made = SharedRanker(ranker, make, CorpusSource(storage), NoteChangeLog(folder))
        with _SHARED_GUARD:
            shared = _SHARED.setdefault(key, made)
    else:
        stand_in = take_stand_in()
    return RankerUpkeep(shared=shared, folder=folder, stands_in_for=stand_in)
