"""Search without numpy for a query with common terms, proven from champion lists.

A cold process (numpy not imported: ~55 ms to import) tries this first for a query with
a plain term that has a champion list (``Bm25Index.search``): it scores a few hundred
documents where ``small_search`` would score every posting (~0.6 us each) and numpy
would first have to be imported. The segment's champion lists (``champions``) give, per
common term, its docs of highest static impact and ``rest``, a bound on the static
impact of its other postings.

* Candidates: the champions of the query's listed (common) terms, every base posting of
  its other terms (boost-only ones too), every delta doc a plain term matches.
* Each candidate is scored exactly as ``small_search`` scores it (``cold_plan``: the same
  operations in the same order, a term's tf found by binary search of its postings), so
  every score is ``run_search``'s double.
* A base doc that is no candidate holds none of the unlisted terms and is no champion:
  it scores at most ``bound`` = the sum over listed plain terms of ``weight x rest``
  plus, over listed boost-only terms, ``weight x top`` (``rest``/``top``: the lists'
  bounds of a static impact on ``today``), widened by ``max(1, avgdl / avgdl0)`` (a
  delta that lengthens the average lowers every norm by that ratio at most; one that
  shortens it only raises norms) and by ``SLACK``; 0 when no plain term is listed (such
  a doc then matches no plain term). Tombstoned docs score 0.
* ``theta``: the ``limit``-th best candidate score. When ``bound < theta`` no other doc
  reaches the cut, so the candidates' best ``limit`` (ties at the cut by path) is the
  answer; otherwise, or on a day before the impacts' day, or for a segment without
  champion lists, the answer is None and the caller searches with numpy.

Cost: O(candidates x listed terms x log postings) + O(postings of the unlisted terms).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import TYPE_CHECKING

from plugins.recall_bm25.cold_plan import (
    PlannedTerm,
    Scored,
    best_paths,
    delta_scores,
    plan_query,
)
from plugins.recall_bm25.scalar_math import SLACK, freshness_of

if TYPE_CHECKING:
    from plugins.recall_bm25.delta_store import DeltaState, DeltaStore
    from plugins.recall_bm25.query import QueryTerm
    from plugins.recall_bm25.segment_reader import BaseSegment

__all__ = ["MAX_LOOKUPS", "champion_search"]

#: Most (candidate, term) lookups a search makes before it declines (~0.5 us each). On
#: the 100k-note bench vault a query of 8 Zipfian words needs ~25k (13 ms, 33 of 40
#: proven), one of 12 words ~51k (24 ms, 16 of 40 proven: its bound sums a dozen terms'
#: ``rest``), about what importing numpy and searching with it costs.
MAX_LOOKUPS = 30_000

#: How a term's tf in a candidate is found: its postings by doc (an unlisted term, all
#: read anyway), or its postings (doc ids, tfs) to binary-search (a listed term).
_Lookup = dict[int, int] | tuple[Sequence[int], Sequence[int]]


def champion_search(base: BaseSegment, state: DeltaState, live: bool, store: DeltaStore,
                    query: Sequence[QueryTerm], tids: Sequence[int], limit: int,
                    today: int) -> list[tuple[str, float]] | None:
    """``run_search``'s answer (paths and scores bit for bit, ties at the cut by path) when
    the champion lists prove it (module docstring); None when they do not, when no plain
    term of ``query`` has a list (then nothing is read) or when scoring the candidates
    would take more than ``MAX_LOOKUPS`` lookups. Call inside a read
    transaction of ``store``; ``state``, ``live`` and ``tids`` as for ``small_search``."""
    lists = base.champions()
    if lists is None or today < lists.day or not any(
            q.plain and tid >= 0 and lists.slot(tid) is not None
            for q, tid in zip(query, tids, strict=True)):
        return None
    plan = plan_query(base, state, live, store, query, tids)
    if plan is None:
        return []
    candidates: set[int] = set()
    lookups: list[_Lookup | None] = []
    rest_sum = boost_sum = 0.0
    listed_plain = False
    for t in plan.terms:
        if t.tid < 0:
            lookups.append(None)
            continue
        slot = lists.slot(t.tid)
        docs, tfs = base.posting_lists(t.tid)
        if slot is None:
            by_doc = dict(zip(docs, tfs, strict=True))
            candidates.update(by_doc)
            lookups.append(by_doc)
        else:
            if t.plain:
                candidates.update(lists.docs(slot))
                rest_sum += t.weight * lists.rest(slot, today)
                listed_plain = True
            else:
                boost_sum += t.weight * lists.top(slot, today)
            lookups.append((docs, tfs))
    if len(candidates) * sum(look is not None for look in lookups) > MAX_LOOKUPS:
        return None
    scored = _scored(base, plan.terms, lookups, sorted(candidates - plan.dead), plan.scale,
                     plan.offset, today)
    scored += delta_scores(plan, today)
    if listed_plain:
        avgdl0 = base.total_len / base.n_docs if base.n_docs > 0 and base.total_len > 0 \
            else 1.0
        bound = (rest_sum + boost_sum) * max(1.0, plan.avgdl / avgdl0) * SLACK
        if bound > 0.0 and not bound < _kth_best(scored, limit):
            return None
    return best_paths(base, store, plan, scored, limit)


def _kth_best(scored: list[Scored], limit: int) -> float:
    """The ``limit``-th highest positive score; 0.0 when there are fewer."""
    positive = [s for s, _d, _b in scored if s > 0.0]
    if len(positive) < limit:
        return 0.0
    positive.sort(reverse=True)
    return positive[limit - 1]


def _scored(base: BaseSegment, terms: Sequence[PlannedTerm], lookups: Sequence[_Lookup | None],
            candidates: list[int], scale: float, offset: float, today: int) -> list[Scored]:
    """The exact score of each candidate base doc (ascending ids, none tombstoned) that a
    plain term matches: plain terms in query order, then the boosts where a plain term
    matched, then the prior (``cold_plan.add_contributions``'s arithmetic)."""
    order = [(t.weight, look, t.plain) for t, look in zip(terms, lookups, strict=True)
             if look is not None]
    order.sort(key=lambda item: not item[2])  # stable: plain terms, then boosts
    cursor = [0] * len(order)
    doc_len, weights, updated = base.doc_lengths(), base.doc_weights(), base.doc_days()
    out: list[Scored] = []
    for doc in candidates:
        norm = doc_len[doc] * scale + offset
        total: float | None = None
        for i, (weight, look, plain) in enumerate(order):
            if not plain and total is None:
                break
            if isinstance(look, dict):
                tf = look.get(doc)
                if tf is None:
                    continue
            else:
                docs, tfs = look
                pos = bisect.bisect_left(docs, doc, cursor[i])
                cursor[i] = pos
                if pos == len(docs) or docs[pos] != doc:
                    continue
                tf = tfs[pos]
            value = float(tf)
            value = (value * weight) / (value + norm)
            total = value if total is None else total + value
        if total is not None:
            out.append((total * (weights[doc] * freshness_of(updated[doc], today)), doc, True))
    return out
