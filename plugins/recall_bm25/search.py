"""Query evaluation over one consistent view: the base segment plus the live delta.

``Snapshot`` is what a search needs besides the query: the base, the delta's totals, the
tombstoned base docs, and (computed on first need, then cached) the per-doc length norm
and prior of the base. ``run_search`` scores base postings with numpy and delta postings
(one SQL ``group_concat`` per term, parsed by numpy), applies the priors, and picks the
top ``limit``. A query whose plain terms hold ``PRUNE_MIN_POSTINGS`` base postings or
more scores only the base docs that can make the top ``limit`` (``pruning``: same answer).
Cost: O(sum of the query terms' posting lengths) exhaustively (and on a term's first
pruned query, which computes its bounds), else O(candidates x log postings); plus O(N_base)
once per snapshot for the cached per-doc arrays when a query touches many docs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from plugins.recall_bm25.delta_store import DeltaStore, DeltaTable
from plugins.recall_bm25.keys import term_key
from plugins.recall_bm25.pruning import PRUNE_MIN_POSTINGS, ScoredTerm, pruned_base
from plugins.recall_bm25.query import QueryTerm, merge_query
from plugins.recall_bm25.scoring import (
    SPARSE_RATIO,
    Floats,
    Ints,
    Postings,
    accumulate,
    freshness,
    idf,
    length_norm,
    term_contributions,
    top_k,
)
from plugins.recall_bm25.segment_reader import BaseSegment

__all__ = ["QueryTerm", "Snapshot", "merge_query", "run_search"]


class Snapshot:
    """The index as one search sees it (immutable once built; caches are derived).

    ``live_delta`` False: the delta is stale (of an older generation) and is ignored.
    ``dead``: tombstoned base docs (None when there are none). ``n_docs``/``total_len``
    count base minus tombstones plus delta; ``n_delta``/``n_tomb`` the delta's docs and
    tombstones.
    """

    def __init__(self, version: int, base: BaseSegment, live_delta: bool, n_docs: int,
                 total_len: int, n_delta: int, n_tomb: int,
                 dead: npt.NDArray[np.bool_] | None) -> None:
        self.version, self.base, self.live_delta = version, base, live_delta
        self.n_docs, self.total_len, self.dead = n_docs, total_len, dead
        self.n_delta, self.n_tomb = n_delta, n_tomb
        self.avgdl = total_len / n_docs if n_docs > 0 and total_len > 0 else 1.0
        self._norm: Floats | None = None
        self._delta_table: DeltaTable | None = None
        self._prior: tuple[int, Floats] | None = None

    def _dense(self, count: int) -> bool:
        return count * SPARSE_RATIO >= self.base.n_docs

    def delta_table(self, store: DeltaStore) -> DeltaTable:
        """The delta docs' attributes (read once per snapshot)."""
        if self._delta_table is None:
            self._delta_table = store.doc_table()
        return self._delta_table

    def norm(self, docs: Ints) -> Floats:
        """BM25 length norm of base docs (cached for all docs when worth it)."""
        doc_len = self.base.arrays.doc_len
        if self._norm is None and not self._dense(docs.shape[0]):
            return length_norm(doc_len[docs], self.avgdl)
        if self._norm is None:
            self._norm = length_norm(doc_len, self.avgdl)
        found: Floats = self._norm[docs]
        return found

    def prior(self, ids: Ints | None, today: int) -> Floats:
        """weight x freshness of base docs (``ids``; None: every doc, in id order); 0 for
        tombstoned ones."""
        arr = self.base.arrays
        cached = self._prior is not None and self._prior[0] == today
        if ids is not None and not cached and not self._dense(ids.shape[0]):
            prior = arr.doc_weight[ids] * freshness(arr.doc_updated[ids], today)
            if self.dead is not None:
                prior[self.dead[ids]] = 0.0
            return prior
        if self._prior is None or self._prior[0] != today:
            table = arr.doc_weight * freshness(arr.doc_updated, today)
            if self.dead is not None:
                table[self.dead] = 0.0
            self._prior = (today, table)
        if ids is None:
            return self._prior[1]
        found: Floats = self._prior[1][ids]
        return found


def run_search(snap: Snapshot, store: DeltaStore, query: Sequence[QueryTerm], limit: int,
               today: int, *, prune: bool = True) -> list[tuple[str, float]]:
    """Best (path, score) pairs, highest first, ties by path; call inside a read
    transaction of ``store`` (the snapshot must come from the same transaction).
    ``prune``: when the plain terms hold ``PRUNE_MIN_POSTINGS`` base postings or more,
    score only the base docs that can make the top ``limit`` (``pruning``; the same
    answer, every score the same double); False scores every posting."""
    if snap.n_docs <= 0 or not any(q.plain for q in query):
        return []
    base = snap.base
    keys = [term_key(q.term) for q in query]
    tids = base.term_ids(keys).tolist()
    rows = ([store.term_postings(k) for k in keys] if snap.live_delta and snap.n_delta
            else [None] * len(keys))
    table = snap.delta_table(store) if snap.live_delta and snap.n_delta else None
    adjust = (store.df_adjustments([t for t in tids if t >= 0])
              if snap.live_delta and snap.n_tomb else {})
    base_terms: list[ScoredTerm] = []
    delta_parts: tuple[list[Postings], list[Postings]] = ([], [])
    for q, tid, found in zip(query, tids, rows, strict=True):
        df = base.df(tid) - adjust.get(tid, 0) if tid >= 0 else 0
        df += 0 if found is None else found[0].shape[0]
        if df <= 0:
            continue
        w_idf = q.weight * idf(snap.n_docs, df)
        if tid >= 0:
            base_terms.append(ScoredTerm(tid, w_idf, q.plain))
        if found is not None and table is not None and found[0].shape[0]:
            norm = length_norm(table.lens[table.rows(found[0])], snap.avgdl)
            delta_parts[not q.plain].append((found[0], term_contributions(found[1], norm, w_idf)))

    pruned = None
    if prune and sum(base.df(t.tid) for t in base_terms if t.plain) >= PRUNE_MIN_POSTINGS:
        pruned = pruned_base(base, base_terms, limit, snap.avgdl, today, snap.norm,
                             lambda ids: snap.prior(ids, today))
    base_ids: Ints | None
    if pruned is not None:
        base_ids, base_scores = pruned
    else:
        base_ids, base_scores = _exhaustive(snap, base_terms, today)
    delta_ids, delta_sums = accumulate(*delta_parts, None)
    assert delta_ids is not None  # sparse
    if table is not None and delta_ids.shape[0]:
        at = table.rows(delta_ids)
        delta_sums *= table.weights[at] * freshness(table.updated[at], today)
    merged = np.concatenate([base_scores, delta_sums]) if delta_ids.shape[0] else base_scores
    best = top_k(merged, limit)
    n_base = base_scores.shape[0]
    positions, scores = best.tolist(), merged[best].tolist()
    from_base = best[best < n_base]
    docs = iter((from_base if base_ids is None else base_ids[from_base]).tolist())
    from_delta = delta_ids[best[best >= n_base] - n_base].tolist()
    delta_paths = store.paths(from_delta) if from_delta else {}
    in_delta = iter(from_delta)
    results = [(base.path(next(docs)) if p < n_base else delta_paths[next(in_delta)], score)
               for p, score in zip(positions, scores, strict=True)]
    results.sort(key=lambda r: (-r[1], r[0]))
    return results[:limit]


def _exhaustive(snap: Snapshot, terms: Sequence[ScoredTerm], today: int
                ) -> tuple[Ints | None, Floats]:
    """Every base posting of ``terms`` scored: ``scoring.accumulate``'s (ids, sums) times
    the priors."""
    base = snap.base
    parts: tuple[list[Postings], list[Postings]] = ([], [])
    for t in terms:
        post_doc, post_tf = base.postings(t.tid)
        docs = post_doc.astype(np.int64)  # intp indexes faster than uint32
        parts[not t.plain].append((docs, term_contributions(post_tf, snap.norm(docs), t.w_idf)))
    ids, scores = accumulate(*parts, base.n_docs)
    scores *= snap.prior(ids, today)
    return ids, scores
