"""What the numpy-free searches (``small_search``, ``cold_pruned``) share: a query weighed
against one view of the index (``plan_query``), the arithmetic of a term's contribution
(``add_contributions``), the delta's scores and the final cut (``best_paths``).

Every number is computed as ``search.run_search`` computes it, operation for operation
(``small_search``'s module docstring), so both searches give its scores bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from plugins.recall_bm25.keys import term_key
from plugins.recall_bm25.scalar_math import K1, freshness_of, idf, norm_terms

if TYPE_CHECKING:
    from plugins.recall_bm25.delta_store import DeltaState, DeltaStore
    from plugins.recall_bm25.query import QueryTerm
    from plugins.recall_bm25.segment_reader import BaseSegment

__all__ = ["ColdPlan", "PlannedTerm", "Scored", "add_contributions", "best_paths",
           "delta_scores", "plan_query"]

#: (score, doc id, whether the doc is a base doc (else a delta doc)).
Scored = tuple[float, int, bool]


@attrs.frozen(eq=False)
class PlannedTerm:
    """A query term that matches something: its base term id (-1: none), its weight
    ``q.weight x idf x (K1 + 1)``, plainness, and its delta postings (doc id, tf)."""

    tid: int
    weight: float
    plain: bool
    rows: list[tuple[int, int]]


@attrs.frozen(eq=False)
class ColdPlan:
    """A query against one view: the view's doc count and average length (and the norm's
    ``scale``/``offset``), the matching terms in query order, the tombstoned base docs,
    whether the delta is searched and its matched docs' (length, weight, updated)."""

    n_docs: int
    avgdl: float
    scale: float
    offset: float
    terms: list[PlannedTerm]
    dead: set[int]
    with_delta: bool
    delta_rows: dict[int, tuple[int, float, int]]


def plan_query(base: BaseSegment, state: DeltaState, live: bool, store: DeltaStore,
               query: Sequence[QueryTerm], tids: Sequence[int]) -> ColdPlan | None:
    """The plan of ``query`` (``tids``: ``small_search.base_postings``'s term ids); None
    when nothing can match (no doc, or no plain term). Call inside a read transaction of
    ``store``; ``state`` is the delta's totals (zeros when not ``live``)."""
    n_docs = base.n_docs - state.n_tomb + state.n_delta
    total_len = base.total_len - state.len_tomb + state.len_delta
    if n_docs <= 0 or not any(q.plain for q in query):
        return None
    avgdl = total_len / n_docs if total_len > 0 else 1.0
    scale, offset = norm_terms(avgdl)
    with_delta = live and state.n_delta > 0
    found = [store.term_doc_tfs(term_key(q.term)) if with_delta else [] for q in query]
    adjust = (store.df_adjustments([t for t in tids if t >= 0])
              if live and state.n_tomb else {})
    dead = store.tombstone_set() if live and state.n_tomb else set()
    delta_rows = store.doc_rows({d for rows in found for d, _tf in rows}) if with_delta else {}
    terms = []
    for q, tid, rows in zip(query, tids, found, strict=True):
        df = base.df(tid) - adjust.get(tid, 0) if tid >= 0 else 0
        df += len(rows)
        if df > 0:
            terms.append(PlannedTerm(tid, q.weight * idf(n_docs, df) * (K1 + 1.0), q.plain,
                                     rows))
    return ColdPlan(n_docs, avgdl, scale, offset, terms, dead, with_delta, delta_rows)


def add_contributions(sums: dict[int, float], docs: Sequence[int], tfs: Sequence[int],
                      lengths: Sequence[int], scale: float, offset: float, weight: float,
                      plain: bool, dead: set[int]) -> None:
    """Add one term's contributions ``tf x weight / (tf + norm)`` (``term_contributions``
    in the same order of operations); a boost term only to documents already matched."""
    for doc, tf, length in zip(docs, tfs, lengths, strict=True):
        if doc in dead:
            continue
        value = float(tf)
        value = (value * weight) / (value + (length * scale + offset))
        if plain:
            sums[doc] = sums.get(doc, 0.0) + value
        elif doc in sums:
            sums[doc] += value


def delta_scores(plan: ColdPlan, today: int) -> list[Scored]:
    """The exact score of every delta doc a plain term matches (every plain term first,
    then the boosts, in query order, then the prior)."""
    if not plan.with_delta:
        return []
    rows_of = plan.delta_rows
    sums: dict[int, float] = {}
    for plain in (True, False):
        for t in plan.terms:
            if t.plain is plain and t.rows:
                add_contributions(sums, [d for d, _ in t.rows], [tf for _, tf in t.rows],
                                  [rows_of[d][0] for d, _ in t.rows], plan.scale,
                                  plan.offset, t.weight, plain, set())
    return [(s * (rows_of[d][1] * freshness_of(rows_of[d][2], today)), d, False)
            for d, s in sums.items()]


def best_paths(base: BaseSegment, store: DeltaStore, plan: ColdPlan, scored: list[Scored],
               limit: int) -> list[tuple[str, float]]:
    """The best ``limit`` of ``scored`` (positive scores only) as (path, score), highest
    first, ties by path: every doc tied at the cut is named, then sorted and cut."""
    scored = [item for item in scored if item[0] > 0.0]
    if not scored:
        return []
    scored.sort(key=lambda item: -item[0])
    cut = scored[min(limit, len(scored)) - 1][0]
    best = [item for item in scored if item[0] >= cut]
    paths = store.paths([d for _s, d, in_base in best if not in_base]) \
        if plan.with_delta else {}
    results = [(base.path(d) if in_base else paths[d], s) for s, d, in_base in best]
    results.sort(key=lambda r: (-r[1], r[0]))
    return results[:limit]
