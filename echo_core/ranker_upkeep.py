"""The core keeps the active ranker (config ``recall``) current; a ranker only ranks.

Two kinds of ranker (``echo_core.protocols``):

* a ``PersistentRanker`` keeps its own files in the state dir, shared by every process of
  the vault. Each context opens its own instance; the core upserts / removes on every note
  write and deletion, and ``ops.recall_index.ensure_index`` rebuilds it when its
  ``needs_rebuild()`` says so.
* a plain ``Ranker`` lives in memory. One instance per process and ranker folder
  (``SharedRanker``), shared by every context of the process (the MCP server's worker
  threads). It is built from the corpus on first use (``ensure_built``, called by every
  search), and from then on kept current by this process's writes. Calls into it are
  serialised by a lock, so it need not be thread-safe. Writes made by *other* processes
  reach it only when this process rebuilds it (a fresh process, or ``reindex``).

A write made before the first search is not lost: until the shared ranker is built, note
events skip it (under the same lock the build holds), and the build reads the corpus after
the write is durable; after the build they upsert. ``upsert`` is idempotent by path, so a
note is never indexed twice either way.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence

from echo_core.corpus import index_doc
from echo_core.models import Note
from echo_core.protocols import IndexDoc, PersistentRanker, Ranker, WeightedTerm

log = logging.getLogger("echo_memory")

#: Builds a fresh ranker of the active kind (the factory bound to tokenizer and folder).
MakeRanker = Callable[[], Ranker]
#: Yields the corpus's documents (``echo_core.corpus.iter_corpus`` on the vault).
CorpusDocs = Callable[[], Iterable[IndexDoc]]


class SharedRanker:
    """The process's one plain (in-memory) ranker for a ranker folder.

    Built from the corpus once (``ensure_built``), rebuilt on ``rebuild``; ``upsert``,
    ``remove`` and ``search`` are serialised with the build by one re-entrant lock.
    """

    def __init__(self, ranker: Ranker, make: MakeRanker) -> None:
        self.ranker = ranker
        self.built = False
        self._make = make
        self._lock = threading.RLock()

    def ensure_built(self, docs: CorpusDocs) -> bool:
        """Index the whole corpus unless already done in this process. True when it ran."""
        with self._lock:
            if self.built:
                return False
            for doc in docs():
                self.ranker.upsert(doc)
            self.built = True
            return True

    def rebuild(self, docs: Iterable[IndexDoc], progress: Callable[[int], None] | None = None,
                every: int = 500) -> int:
        """Replace the ranker by a fresh one holding exactly ``docs``; the count indexed.

        A factory that hands back the same object has every path it knows (``paths()``,
        when it has one) removed first."""
        with self._lock:
            fresh = self._make()
            if fresh is self.ranker:
                for path in _indexed_paths(fresh):
                    fresh.remove(path)
            count = 0
            for doc in docs:
                fresh.upsert(doc)
                count += 1
                if progress and count % every == 0:
                    progress(count)
            self.ranker, self.built = fresh, True
            return count

    def upsert(self, doc: IndexDoc) -> None:
        """Add or replace ``doc`` once built (before, the build will read it)."""
        with self._lock:
            if self.built:
                self.ranker.upsert(doc)

    def remove(self, path: str) -> None:
        """Forget ``path`` once built (before, the build will not find it)."""
        with self._lock:
            if self.built:
                self.ranker.remove(path)

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        """The ranker's ``search``, under the lock (call ``ensure_built`` first)."""
        with self._lock:
            return self.ranker.search(terms, limit)


def _indexed_paths(ranker: object) -> list[str]:
    paths = getattr(ranker, "paths", None)
    return list(paths()) if callable(paths) else []


_SHARED: dict[Hashable, SharedRanker] = {}
_SHARED_GUARD = threading.Lock()


class RankerUpkeep:
    """The active ranker of one context, and the core's upkeep of it.

    ``ranker`` is the object to search (for a plain ranker: the process's shared one,
    which ``reindex`` may replace). ``note_written`` / ``note_deleted`` keep it current;
    ``search`` builds a plain ranker on first use and serialises calls into it.
    """

    def __init__(self, persistent: PersistentRanker | None = None,
                 shared: SharedRanker | None = None) -> None:
        if (persistent is None) == (shared is None):
            raise ValueError("RankerUpkeep takes exactly one of persistent= or shared=")
        self.persistent = persistent
        self.shared = shared

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
        target = self._target()
        if doc is None:
            target.remove(note.path)
        else:
            target.upsert(doc)

    def note_deleted(self, path: str) -> None:
        """Remove ``path`` (a no-op when it was never indexed)."""
        self._target().remove(path)

    def ensure_built(self, docs: CorpusDocs) -> bool:
        """Build a plain ranker from ``docs()`` once per process; True when it ran. A
        persistent ranker is left to ``ensure_index`` (its ``needs_rebuild``): False."""
        return False if self.shared is None else self.shared.ensure_built(docs)

    def search(self, terms: Sequence[WeightedTerm], limit: int,
               docs: CorpusDocs) -> list[tuple[str, float]]:
        """Search the active ranker, building a plain one from ``docs()`` first if needed."""
        if self.persistent is not None:
            return self.persistent.search(terms, limit)
        shared = self._shared()
        shared.ensure_built(docs)
        return shared.search(terms, limit)

    def _shared(self) -> SharedRanker:
        assert self.shared is not None
        return self.shared

    def _target(self) -> Ranker | SharedRanker:
        """Where note events go (never tested for truth: a ranker may define ``__len__``)."""
        return self.persistent if self.persistent is not None else self._shared()


def open_ranker(key: Hashable, make: MakeRanker) -> RankerUpkeep:
    """The upkeep of the ranker ``make`` builds, for the ranker folder ``key`` names.

    A plain ranker already built in this process for ``key`` is reused without calling
    ``make``; otherwise ``make()`` is called once: a ``PersistentRanker`` is this
    context's own, a plain one becomes the process's shared ranker for ``key``.
    """
    with _SHARED_GUARD:
        shared = _SHARED.get(key)
    if shared is None:
        ranker = make()
        if isinstance(ranker, PersistentRanker):
            return RankerUpkeep(persistent=ranker)
        with _SHARED_GUARD:
            shared = _SHARED.setdefault(key, SharedRanker(ranker, make))
    return RankerUpkeep(shared=shared)
