"""Search without numpy for a query whose postings are few (a cold process's query).

numpy costs a one-shot process ~50 ms to import, more than scoring a few tens of
thousands of postings one by one. ``Bm25Index.search`` takes this path when numpy is not
imported yet, the champion lists do not answer the query (``cold_pruned``) and its plain
terms hold at most ``SMALL_QUERY_POSTINGS`` postings in all (their document frequencies,
read from the mapped segment; a boost-only term is looked up for the documents they
matched only); otherwise ``search`` does.

It scores exactly as ``search.run_search`` does, operation for operation: the same norm,
contribution and prior arithmetic in the same order, sums accumulated in term order,
``scalar_math`` for the two transcendental functions, so every score is the same double
(``tests/test_recall_bm25_small.py`` compares the two paths). Results are sorted by
(-score, path); the one difference: when more than ``scoring.TIE_SLACK`` documents tie
exactly at the cut, ``run_search`` keeps an arbitrary ``limit`` of them before sorting,
this path the first by path.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import TYPE_CHECKING

from plugins.recall_bm25.cold_plan import add_contributions, best_paths, delta_scores, plan_query
from plugins.recall_bm25.keys import term_key
from plugins.recall_bm25.scalar_math import freshness_of

if TYPE_CHECKING:
    from plugins.recall_bm25.delta_store import DeltaState, DeltaStore
    from plugins.recall_bm25.query import QueryTerm
    from plugins.recall_bm25.segment_reader import BaseSegment

__all__ = ["SMALL_QUERY_POSTINGS", "base_postings", "small_search"]

#: Up to this many postings (base document frequencies of the query's terms, summed) a
#: process without numpy scores the query in Python: ~0.5 us a posting, so ~20 ms here,
#: against ~50 ms to import numpy.
SMALL_QUERY_POSTINGS = 40_000


def base_postings(base: BaseSegment, query: Sequence[QueryTerm]) -> tuple[list[int], int]:
    """The term id of each query term in ``base`` (-1: absent) and how many postings the
    plain terms hold (a boost-only term is looked up for the documents they match only)."""
    keys = base.term_keys()
    ids = []
    total = 0
    for q in query:
        key = term_key(q.term)
        pos = bisect.bisect_left(keys, key)
        tid = pos if pos < len(keys) and keys[pos] == key else -1
        ids.append(tid)
        total += base.df(tid) if tid >= 0 and q.plain else 0
    return ids, total


def small_search(base: BaseSegment, state: DeltaState, live: bool, store: DeltaStore,
                 query: Sequence[QueryTerm], tids: Sequence[int], limit: int,
                 today: int) -> list[tuple[str, float]]:
    """Best (path, score) pairs, highest first, ties by path (``run_search``'s answer);
    call inside a read transaction of ``store``. ``state`` is the delta's totals (zeros
    when not ``live``), ``tids`` ``base_postings``'s term ids."""
    plan = plan_query(base, state, live, store, query, tids)
    if plan is None:
        return []
    doc_len = base.doc_lengths()
    base_sums: dict[int, float] = {}
    for plain in (True, False):  # every plain term first: boosts only add to matches
        for t in plan.terms:
            if t.plain is not plain or t.tid < 0:
                continue
            docs: Sequence[int]
            tfs: Sequence[int]
            docs, tfs = base.posting_lists(t.tid)
            if not plain:  # only the matched documents: a binary search each
                docs, tfs = _matched(base_sums, docs, tfs)
            add_contributions(base_sums, docs, tfs, [doc_len[d] for d in docs], plan.scale,
                              plan.offset, t.weight, plain, plan.dead)
    weights, updated = base.doc_weights(), base.doc_days()
    scored = [(s * (weights[d] * freshness_of(updated[d], today)), d, True)
              for d, s in base_sums.items()]
    return best_paths(base, store, plan, scored + delta_scores(plan, today), limit)


def _matched(sums: dict[int, float], docs: Sequence[int],
             tfs: Sequence[int]) -> tuple[list[int], list[int]]:
    """The postings (ascending doc ids) of the documents already in ``sums``."""
    found_docs, found_tfs = [], []
    size = len(docs)
    for doc in sums:
        pos = bisect.bisect_left(docs, doc)
        if pos < size and docs[pos] == doc:
            found_docs.append(doc)
            found_tfs.append(tfs[pos])
    return found_docs, found_tfs
