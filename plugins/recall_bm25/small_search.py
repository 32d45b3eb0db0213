"""Search without numpy for a query whose postings are few (a cold process's query).

numpy costs a one-shot process ~50 ms to import, more than scoring a few tens of
thousands of postings one by one. ``Bm25Index.search`` takes this path when numpy is not
imported yet and the query's plain terms hold at most ``SMALL_QUERY_POSTINGS`` postings
in all (their document frequencies, read from the mapped segment; a boost-only term is
looked up for the documents they matched only); otherwise ``search`` does.

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

from plugins.recall_bm25.keys import term_key
from plugins.recall_bm25.scalar_math import K1, freshness_of, idf, norm_terms

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
    n_docs = base.n_docs - state.n_tomb + state.n_delta
    total_len = base.total_len - state.len_tomb + state.len_delta
    if n_docs <= 0 or not any(q.plain for q in query):
        return []
    avgdl = total_len / n_docs if total_len > 0 else 1.0
    scale, offset = norm_terms(avgdl)
    with_delta = live and state.n_delta > 0
    found = [store.term_doc_tfs(term_key(q.term)) if with_delta else [] for q in query]
    adjust = (store.df_adjustments([t for t in tids if t >= 0])
              if live and state.n_tomb else {})
    dead = store.tombstone_set() if live and state.n_tomb else set()
    delta_rows = store.doc_rows({d for rows in found for d, _tf in rows}) if with_delta else {}
    doc_len = base.doc_lengths()
    base_sums: dict[int, float] = {}
    delta_sums: dict[int, float] = {}
    for plain in (True, False):  # every plain term first: boosts only add to matches
        for q, tid, rows in zip(query, tids, found, strict=True):
            if q.plain is not plain:
                continue
            df = base.df(tid) - adjust.get(tid, 0) if tid >= 0 else 0
            df += len(rows)
            if df <= 0:
                continue
            weight = q.weight * idf(n_docs, df) * (K1 + 1.0)
            if tid >= 0:
                docs: Sequence[int]
                tfs: Sequence[int]
                docs, tfs = base.posting_lists(tid)
                if not plain:  # only the matched documents: a binary search each
                    docs, tfs = _matched(base_sums, docs, tfs)
                _add(base_sums, docs, tfs, [doc_len[d] for d in docs], scale, offset,
                     weight, plain, dead)
            if rows:
                _add(delta_sums, [d for d, _ in rows], [tf for _, tf in rows],
                     [delta_rows[d][0] for d, _ in rows], scale, offset, weight, plain, set())
    weights, updated = base.doc_weights(), base.doc_days()
    scored = [(s * (weights[d] * freshness_of(updated[d], today)), d, True)
              for d, s in base_sums.items()]
    scored += [(s * (delta_rows[d][1] * freshness_of(delta_rows[d][2], today)), d, False)
               for d, s in delta_sums.items()]
    scored = [item for item in scored if item[0] > 0.0]
    if not scored:
        return []
    scored.sort(key=lambda item: -item[0])
    cut = scored[min(limit, len(scored)) - 1][0]
    best = [item for item in scored if item[0] >= cut]
    paths = store.paths([d for _s, d, in_base in best if not in_base]) if with_delta else {}
    results = [(base.path(d) if in_base else paths[d], s) for s, d, in_base in best]
    results.sort(key=lambda r: (-r[1], r[0]))
    return results[:limit]


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


def _add(sums: dict[int, float], docs: Sequence[int], tfs: Sequence[int],
         lengths: Sequence[int], scale: float, offset: float, weight: float, plain: bool,
         dead: set[int]) -> None:
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
