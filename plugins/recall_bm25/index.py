"""``Bm25Index``: the ``bm25`` ranker, a persistent BM25 index for one vault.

An immutable, memory-mapped base segment (``CURRENT`` -> ``base-<gen>/``) plus a SQLite
delta of the changes since (see ``layout``, ``segment_format``, ``delta_store``).

* ``upsert``/``remove``: one SQLite transaction touching only the changed doc's rows:
  O(terms of the doc) + O(log N) lookups; durable when they return.
* When the delta holds more than ``max(merge_min_docs, merge_fraction x N_base)`` docs,
  the next write folds it into a new generation (``compact``), from index data only.
* ``search``: see ``search.run_search``; opening costs 16 ``mmap``s and a SQLite connect.
  A process that has not imported numpy (~55 ms) first tries to prove the answer from
  the champion lists (``cold_pruned``: a query with a common term), then scores a query
  of few postings in Python (``small_search``); only then does it import numpy. Once a
  process has spent ``NUMPY_PAYS_MS`` on those Python paths (a long-lived server after a
  few dozen queries), it imports numpy and takes the vectorised path from then on.
* Crash safety: a segment is written in a private folder, fsynced, renamed, and only
  then made live by replacing ``CURRENT``; the delta's rows of an older generation are
  ignored. A kill at any instant leaves a usable index or ``needs_rebuild() == True``.
* Concurrency: readers in other processes see either the old or the new state; writers
  serialise on SQLite's write lock (a merge holds it while it runs; ``rebuild`` only while
  it switches). Upserts from other processes *during* a ``rebuild``'s build phase are
  discarded with the old delta, so callers should rebuild under the vault lock.
* ``rebuild`` of many docs (a list, or a ``SplittableDocs`` corpus read on demand) hands
  the second half to another core: a forked child tokenizes and counts it (reading it
  too, for a corpus) and sends back its postings as arrays, already sorted
  (``segment_parts``); the parent merges them with its own half's.
"""

from __future__ import annotations

import datetime as _dt
import functools
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from echo_core import (
    IndexDoc,
    SplittableDocs,
    Tokenizer,
    WeightedTerm,
    lazy_logger,
    start_forked,
)
from plugins.recall_bm25.cold_pruned import champion_search
from plugins.recall_bm25.delta_store import DeltaState, DeltaStore, remove_files
from plugins.recall_bm25.doc_halves import APART_MIN_DOCS, halves
from plugins.recall_bm25.doc_priors import static_priors
from plugins.recall_bm25.keys import clean_weight, date_ordinal, term_key, tokenizer_id
from plugins.recall_bm25.layout import CorruptIndex, StateLayout, rmtree_quietly
from plugins.recall_bm25.segment_format import TF_MAX
from plugins.recall_bm25.segment_reader import BaseSegment
from plugins.recall_bm25.small_search import SMALL_QUERY_POSTINGS, base_postings, small_search

if TYPE_CHECKING:
    from plugins.recall_bm25.query import QueryTerm
    from plugins.recall_bm25.search import Snapshot

__all__ = ["MERGE_FRACTION", "MERGE_MIN_DOCS", "PROGRESS_EVERY", "Bm25Index"]

log = lazy_logger(__name__)

#: Merge once the delta holds more docs than this ...
MERGE_MIN_DOCS = 2000
#: ... and more than this fraction of the base's docs. Measured at 100k docs: a full
#: delta of 2% (2000 docs) puts warm search p50 at 1.35 ms, 5% at 2.3 ms (delta postings
#: cost ~5x base ones), while a merge costs ~0.5 s, i.e. 0.25 ms per upsert amortised.
MERGE_FRACTION = 0.02
#: ``rebuild`` calls ``progress(n)`` every this many documents (and once at the end).
PROGRESS_EVERY = 500
#: Attempts to open ``CURRENT``'s generation when a concurrent merge deletes it meanwhile.
_OPEN_ATTEMPTS = 5
#: Milliseconds of scoring without numpy after which a process imports it (about what the
#: import costs here): a one-shot CLI or hook process never gets there, a server soon
#: does, and its searches then run ~5x faster (0.35 ms against ~2 ms at 100k notes).
NUMPY_PAYS_MS = 60.0
_python_scoring_ms = [0.0]  # this process's time on the numpy-free paths


class Bm25Index:
    """A ``PersistentRanker`` storing its files under ``<state_dir>/bm25``.

    ``hits_hold_query_words``: every hit holds a query term (as the tokenizer makes them)
    in its indexed text, so recall may drop a hit whose note, as read now, holds none (an
    older text in the index: ``ops.recall._stale_hits``).

    Construction does no I/O. ``search``/``upsert``/``remove``/``compact`` raise
    ``CorruptIndex`` when the index is unreadable (``needs_rebuild()`` then says True and
    never raises) and let ``sqlite3.Error`` through (e.g. a write lock not obtained within
    ``delta_store.BUSY_TIMEOUT``). Thread-safe (one lock per instance); many processes may
    share a state dir.
    """

    hits_hold_query_words = True

    def __init__(self, tokenizer: Tokenizer, state_dir: str, *,
                 merge_min_docs: int = MERGE_MIN_DOCS,
                 merge_fraction: float = MERGE_FRACTION) -> None:
        self._tokenizer = tokenizer
        self._tokenizer_id = tokenizer_id(tokenizer)
        self._layout = StateLayout(state_dir)
        self._merge_min = merge_min_docs
        self._merge_fraction = merge_fraction
        self._today = _dt.date.today().toordinal()
        self._lock = threading.RLock()
        self._store: DeltaStore | None = None
        self._base: BaseSegment | None = None
        self._snap: Snapshot | None = None
        #: The generation ``needs_rebuild`` last found whole (its base and delta read).
        self._checked_gen: int | None = None

    # --- opening ---------------------------------------------------------------------

    def _delta(self) -> DeltaStore:
        if self._store is None:
            self._layout.ensure_root()
            self._store = DeltaStore(self._layout.delta_file)
        return self._store

    def _load_base(self) -> BaseSegment:
        """The generation ``CURRENT`` names (the empty base when there is none)."""
        for _ in range(_OPEN_ATTEMPTS):
            gen = self._layout.read_current()
            if gen is None:
                return BaseSegment.empty()
            if self._base is not None and self._base.generation == gen:
                return self._base
            try:
                base = BaseSegment.open(self._layout.gen_dir(gen), gen)
            except FileNotFoundError:
                continue  # deleted by a merge after we read CURRENT: read it again
            if base.tokenizer != self._tokenizer_id:
                raise CorruptIndex(f"index built with tokenizer {base.tokenizer!r}, "
                                   f"configured {self._tokenizer_id!r}")
            return base
        raise CorruptIndex(f"CURRENT names a generation that does not exist in {self._layout.root}")

    def _snapshot(self, store: DeltaStore) -> Snapshot:
        """The view for a search; call inside a read transaction. Cached until another
        connection commits (``data_version``) or this instance writes."""
        import numpy as np

        from plugins.recall_bm25.search import Snapshot

        state = store.state()
        version = store.data_version()
        if self._snap is not None and self._snap.version == version:
            return self._snap
        self._base = base = self._load_base()
        live = state.gen == base.generation
        if not live:
            state = DeltaState(base.generation)
        dead = None
        if state.n_tomb:
            dead = np.zeros(base.n_docs, dtype=np.bool_)
            tombs = store.tombstones()
            dead[tombs[(tombs >= 0) & (tombs < base.n_docs)]] = True
        self._snap = Snapshot(version, base, live, base.n_docs - state.n_tomb + state.n_delta,
                              base.total_len - state.len_tomb + state.len_delta, state.n_delta,
                              state.n_tomb, dead)
        return self._snap

    def _view_state(self, store: DeltaStore) -> tuple[BaseSegment, DeltaState, bool]:
        """Inside a read transaction, without numpy: ``CURRENT``'s base, the delta's
        totals (zeros when the delta is stale) and whether it is live."""
        state = store.state()
        self._base = base = self._load_base()
        live = state.gen == base.generation
        return base, state if live else DeltaState(base.generation), live

    def _sync_for_write(self, store: DeltaStore) -> tuple[BaseSegment, DeltaState]:
        """Inside a write transaction: load ``CURRENT``'s base and purge a stale delta."""
        self._snap = None
        self._base = base = self._load_base()
        state = store.state()
        if state.gen != base.generation:
            store.reset(base.generation)
            state = DeltaState(base.generation)
        return base, state

    def _base_to_update(self, store: DeltaStore) -> BaseSegment | None:
        """``_sync_for_write``'s base; None (logged, no traceback) when the index must be
        rebuilt, which the next search does from the notes (``needs_rebuild``)."""
        try:
            return self._sync_for_write(store)[0]
        except CorruptIndex as exc:
            log.info("bm25 index at %s not updated: %s", self._layout.root, exc)
            return None

    # --- Ranker ----------------------------------------------------------------------

    def upsert(self, doc: IndexDoc) -> None:
        """Add or replace ``doc.path``; may trigger a merge (see the module docstring)."""
        self.upsert_many([doc])

    def upsert_many(self, docs: Sequence[IndexDoc]) -> None:
        """``upsert`` each of ``docs`` in one write transaction (a sweep re-indexing many
        notes pays one commit); may trigger a merge once they are in."""
        prepared = []
        for doc in docs:
            tokens = self._tokenizer.tokenize(doc.text)
            by_key: dict[int, int] = {}
            for term, n in Counter(tokens).items():
                key = term_key(term)
                by_key[key] = min(by_key.get(key, 0) + n, TF_MAX)
            prepared.append((doc, len(tokens), by_key, self._key_field_keys(doc)))
        if not prepared:
            return
        with self._lock:
            store = self._delta()
            with store.write():
                base = self._base_to_update(store)
                if base is None:
                    return
                for doc, length, by_key, key_terms in prepared:
                    self._supersede(store, base, doc.path)
                    store.insert_doc(doc.path, length, clean_weight(doc.weight),
                                     date_ordinal(doc.updated), list(by_key),
                                     list(by_key.values()), key_terms)
                state = store.state()
            self._snap = None
            if state.n_delta > max(self._merge_min, self._merge_fraction * base.n_docs):
                self.compact()

    def _key_field_keys(self, doc: IndexDoc) -> list[int]:
        """The term keys of ``doc``'s key fields (title and aliases), each once, in text
        order (as ``SegmentBuilder`` keeps them)."""
        return list(dict.fromkeys(map(term_key, self._tokenizer.tokenize(
            f"{doc.title}\n{doc.aliases}"))))

    def key_terms_of(self, paths: Sequence[str], terms: Sequence[str]
                     ) -> dict[str, frozenset[str]]:
        """``KeyFieldRanker``: which of ``terms`` the key fields of each indexed one of
        ``paths`` hold (the live version: the delta's, else the base's unless it was
        superseded or removed). One read transaction; no numpy."""
        by_key: dict[int, list[str]] = {}
        for term in dict.fromkeys(terms):
            by_key.setdefault(term_key(term), []).append(term)
        found: dict[str, frozenset[str]] = {}
        asked = by_key.keys()
        held_none: frozenset[str] = frozenset()
        with self._lock:
            store = self._delta()
            with store.read():
                base, state, live = self._view_state(store)
                fresh = store.key_terms(paths) if live and state.n_delta else {}
                in_base = {path: doc for path in paths if path not in fresh
                           and (doc := base.find(path)) is not None}
                gone = store.tombstoned_of(list(in_base.values())) \
                    if live and state.n_tomb and in_base else set()
                ptr, hashes = base.key_table()
                for path in paths:
                    keys: Iterable[int] | None = fresh.get(path)
                    if keys is None:
                        doc = in_base.get(path)
                        if doc is None or doc in gone:
                            continue
                        keys = hashes[ptr[doc]:ptr[doc + 1]]
                    found[path] = held_none if asked.isdisjoint(keys) else frozenset(
                        term for key in keys for term in by_key.get(key, ()))
        return found

    def priors_of(self, paths: Sequence[str]) -> dict[str, float]:
        """The prior (weight x freshness) each indexed one of ``paths`` is scored with
        (``doc_priors``); one read transaction, no numpy."""
        with self._lock:
            store = self._delta()
            with store.read():
                return static_priors(store, *self._view_state(store), paths, self._today)

    def remove(self, path: str) -> None:
        """Forget ``path`` (a no-op when it is not indexed)."""
        self.remove_many([path])

    def remove_many(self, paths: Sequence[str]) -> None:
        """``remove`` each of ``paths`` in one write transaction."""
        if not paths:
            return
        with self._lock:
            store = self._delta()
            with store.write():
                base = self._base_to_update(store)
                if base is None:
                    return
                for path in paths:
                    self._supersede(store, base, path)
            self._snap = None

    @staticmethod
    def _supersede(store: DeltaStore, base: BaseSegment, path: str) -> None:
        """Hide the current version of ``path`` (base tombstone and/or delta delete)."""
        doc = base.find(path)
        if doc is not None and not store.is_tombstoned(doc):
            store.tombstone(doc, base.doc_length(doc), base.doc_term_ids(doc))
        old = store.find_doc(path)
        if old is not None:
            store.delete_doc(*old)

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        """Best ``(path, score)`` pairs, highest first (ties by path), at most ``limit``;
        every score > 0. Scoring: ``plugins.recall_bm25.scoring``."""
        from plugins.recall_bm25.query import merge_query

        query = merge_query(terms)
        if limit <= 0 or not query:
            return []
        with self._lock:
            store = self._delta()
            with store.read():
                if "numpy" not in sys.modules and _python_scoring_ms[0] < NUMPY_PAYS_MS:
                    started = time.perf_counter()  # a cold process: numpy only if it pays
                    found = self._search_without_numpy(store, query, limit)
                    _python_scoring_ms[0] += (time.perf_counter() - started) * 1000
                    if found is not None:
                        return found
                from plugins.recall_bm25.search import run_search

                return run_search(self._snapshot(store), store, query, limit, self._today)

    def _search_without_numpy(self, store: DeltaStore, query: list[QueryTerm],
                              limit: int) -> list[tuple[str, float]] | None:
        """The champion lists' answer, else a small query's, else None."""
        base, state, live = self._view_state(store)
        tids, postings = base_postings(base, query)
        found = champion_search(base, state, live, store, query, tids, limit, self._today)
        if found is None and postings <= SMALL_QUERY_POSTINGS:
            found = small_search(base, state, live, store, query, tids, limit, self._today)
        return found

    # --- PersistentRanker ------------------------------------------------------------

    def needs_rebuild(self) -> bool:
        """True when no base was ever built, or the files are of another schema, another
        tokenizer, missing or unreadable (the reason is logged). Never raises."""
        try:
            with self._lock:
                gen = self._layout.read_current()
                if gen is None:
                    return True
                if gen == self._checked_gen and self._base is not None \
                        and self._base.generation == gen:
                    return False  # opened and read at this generation before: unchanged
                store = self._delta()
                with store.read():
                    base, _, _ = self._view_state(store)
                self._checked_gen = base.generation
                return False
        except Exception as exc:  # noqa: BLE001 - any failure to open means "rebuild"
            log.warning("bm25 index at %s needs a rebuild: %s", self._layout.root, exc)
            self._drop_handles()
            return True

    def rebuild(self, docs: Iterable[IndexDoc],
                progress: Callable[[int], None] | None = None) -> int:
        """Replace the index with ``docs`` (a path given twice keeps its last version);
        returns the number of distinct paths indexed. The old index stays live until the
        new one is complete; ``progress(n)`` runs every ``PROGRESS_EVERY`` docs."""
        from plugins.recall_bm25.segment_builder import SegmentBuilder, tokenized
        from plugins.recall_bm25.segment_writer import write_segment

        builder = SegmentBuilder(self._tokenizer)
        docs, rest = halves(docs, APART_MIN_DOCS)
        other = start_forked(functools.partial(tokenized, self._tokenizer, rest)) \
            if rest is not None else None
        seen = 0
        try:
            for doc in docs:
                builder.add(doc)
                seen += 1
                if progress is not None and seen % PROGRESS_EVERY == 0:
                    progress(seen)
            if other is not None:
                builder.seal()  # its own half counted while the child still works
                found = other.result()
                builder.add_tokenized(found)
                seen += len(found.paths)
                if isinstance(rest, SplittableDocs):
                    rest.note_skipped(found.skipped)
        finally:
            if other is not None:
                other.cancel()
        tmp = self._layout.new_tmp_dir()
        try:
            write_segment(tmp, builder.finish(), self._tokenizer_id, lists_from=self._today)
            with self._lock:
                self._install(tmp)
        finally:
            rmtree_quietly(tmp)  # gone already once installed
        if progress is not None and seen % PROGRESS_EVERY:
            progress(seen)
        return builder.count

    def compact(self) -> bool:
        """Fold the delta into a new base generation now. False when there was nothing
        to fold. Holds the delta's write lock while it runs (other writers wait)."""
        from plugins.recall_bm25.segment_merge import merge_segment
        from plugins.recall_bm25.segment_writer import write_segment

        with self._lock:
            store = self._delta()
            with store.write():
                base, state = self._sync_for_write(store)
                if state.n_delta == 0 and state.n_tomb == 0 and base.generation > 0:
                    return False
                segment = merge_segment(base, store.tombstones(), store.all_docs())
                tmp = self._layout.new_tmp_dir()
                try:
                    write_segment(tmp, segment, self._tokenizer_id, lists_from=self._today)
                    self._switch(store, tmp, base.generation, state.gen)
                finally:
                    rmtree_quietly(tmp)
            self._after_switch(base.generation)
            return True

    def _install(self, tmp: Path) -> None:
        """Make the segment in ``tmp`` live (rebuild path), recreating a broken delta."""
        try:
            store = self._delta()
            store.state()
        except (CorruptIndex, sqlite3.DatabaseError) as exc:
            log.warning("recreating the bm25 delta: %s", exc)
            self._drop_handles()
            remove_files(self._layout.delta_file)
            store = self._delta()
        with store.write():
            try:
                previous = self._layout.read_current()
            except CorruptIndex:
                previous = None
            self._switch(store, tmp, previous, store.state().gen)
        self._after_switch(previous)

    def _switch(self, store: DeltaStore, tmp: Path, *seen: int | None) -> None:
        """Inside the write transaction: install ``tmp`` as the next generation, point
        ``CURRENT`` at it, purge the delta. A crash after ``CURRENT`` moves leaves a delta
        of the old generation, which is then ignored and purged."""
        gen = self._layout.next_generation(*seen)
        self._layout.install(tmp, gen)
        self._layout.write_current(gen)
        store.reset(gen)
        self._snap = None
        self._base = None

    def _after_switch(self, previous: int | None) -> None:
        """Open the new base and delete generations older than the previous one."""
        self._base = self._load_base()
        keep = {self._base.generation} | ({previous} if previous else set())
        self._layout.cleanup(keep)

    def _drop_handles(self) -> None:
        if self._store is not None:
            try:
                self._store.close()
            except sqlite3.Error:
                pass
        self._store, self._base, self._snap, self._checked_gen = None, None, None, None

    def set_today(self, today_ordinal: int) -> None:
        """The date (``date.toordinal()``) freshness is computed against."""
        self._today = int(today_ordinal)

    def paths(self) -> list[str]:
        """Every indexed path, sorted."""
        with self._lock:
            store = self._delta()
            with store.read():
                snap = self._snapshot(store)
                found = snap.base.all_paths()
                if snap.dead is not None:
                    found = [p for p, d in zip(found, snap.dead.tolist(), strict=True) if not d]
                if snap.live_delta:
                    found.extend(store.paths().values())
        return sorted(found)

    def stats(self) -> dict[str, int]:
        """Diagnostics: generation, docs (N), base docs, rows this instance has written
        to the delta so far (``row_changes``), and delta rows per table."""
        with self._lock:
            store = self._delta()
            with store.read():
                snap = self._snapshot(store)
                counts = store.row_counts() if snap.live_delta else {}
        return {"generation": snap.base.generation, "n_docs": snap.n_docs,
                "base_docs": snap.base.n_docs, "row_changes": store.total_changes(), **counts}

    def close(self) -> None:
        """Release the SQLite connection and the mapped base (reopened on next use)."""
        with self._lock:
            self._drop_handles()

