"""Champion lists, computed when a segment is written (``champion_lists``).

A query with a common term would score tens of thousands of postings; a cold process
(no numpy) proves its top ``limit`` from a few hundred documents instead
(``cold_pruned``). For that, each term holding ``CHAMPION_MIN_DF`` postings or more gets
a list of ``CHAMPIONS`` docs and bounds on the static impact of its other postings.

Static impact of a posting on a day ``t >= day``: ``weight x freshness(updated, t) x tf /
(tf + norm0(len))``, ``norm0`` the BM25 length norm at the segment's own average length
(``pruning.BlockBounds``'s impact; idf and the query weight are applied at query time).
Freshness is ``max(floor, 2 ** (-age / half-life))``, so the impact on day
``day + delta`` is at most ``max(a, b x decay(delta))`` with

* ``a = weight x tf / (tf + norm0) x floor`` (x 1 for an undated doc, or one dated after
  ``day``: freshness 1 at most), the impact at any age;
* ``b = weight x tf / (tf + norm0) x 2 ** (-age on day / half-life)`` (unfloored).

The list holds the ``CHAMPIONS // 2`` docs of highest ``b`` and, among the others, those
of highest ``a``: for any ``delta`` the docs of highest impact are among them (a doc
outranked by as many docs in ``a`` and in ``b`` is outranked on every day; a doc dated
after ``day`` counts at freshness 1 on every day). Stored per
listed term: ``rest_a``/``rest_b``, the highest ``a``/``b`` of the docs not listed, and
``top_a``/``top_b`` over all its postings (for boost-only terms). So a list serves every
day from ``day`` on about as tightly as on ``day``: measured on the 100k-note bench vault
(``bench/perf_cold.py``'s queries with more than ``small_search``'s postings, limit 8),
it proves the top 8 of 162/163 on ``day``, 159 ninety days later and 156 a year later,
where a list of the top impacts on ``day`` alone proves 162, 106 and 95.

``day`` (``champion_day``) is the build day, lowered to the newest ``updated`` of the
segment's docs, so an index built on the wall clock's day still serves a process that
pins an earlier ``ECHO_TODAY`` on which every doc was already written.

Sizes (same vault): 1024 postings list 928 terms (59% of the postings); 512 champions
prove 162/163 top-8s and 144/163 top-50s (~1,050 candidates a query); 1024 champions
161 top-50s for twice the candidates. Cost: ~0.14 s at 100k docs, on a worker thread
while the segment is written (``segment_writer.write_segment``): no measurable build time.
"""

from __future__ import annotations

import attrs
import numpy as np
import numpy.typing as npt

from plugins.recall_bm25.scalar_math import HALF_LIFE, SCORING_MODEL
from plugins.recall_bm25.scoring import FRESHNESS_FLOOR, Floats, length_norm
from plugins.recall_bm25.segment_format import CHAMPION_MODEL_KEY, SegmentArrays

__all__ = ["CHAMPIONS", "CHAMPION_MIN_DF", "ChampionLists", "champion_day", "champion_lists"]

#: Terms with at least this many postings get a champion list.
CHAMPION_MIN_DF = 1024
#: Docs per champion list (at least 2, below ``CHAMPION_MIN_DF``).
CHAMPIONS = 512


@attrs.frozen(eq=False)
class ChampionLists:
    """The champion lists of one segment (``segment_format``'s ``champ_*`` arrays):
    ``terms`` ascending term ids, ``docs`` ``count`` ascending doc ids per term,
    ``bounds`` ``(rest_a, rest_b, top_a, top_b)`` per term; ``b`` taken on ``day``."""

    day: int
    count: int
    terms: npt.NDArray[np.uint32]
    docs: npt.NDArray[np.uint32]
    bounds: Floats

    def arrays(self) -> dict[str, npt.NDArray[np.generic]]:
        """The arrays by their file names (``segment_format.CHAMPION_ARRAYS``)."""
        return {"champ_term": self.terms, "champ_doc": self.docs, "champ_bound": self.bounds}

    def meta(self) -> dict[str, int | str]:
        """The ``meta.json`` entries (``segment_format.CHAMPION_META``)."""
        return {"champion_day": self.day, "champion_count": self.count,
                "n_champion_terms": int(self.terms.shape[0]), CHAMPION_MODEL_KEY: SCORING_MODEL}


def champion_day(segment: SegmentArrays, today: int) -> int:
    """The day ``b`` is taken on: ``today``, or the newest ``updated`` of the segment's
    docs when that is earlier (1 when no doc is dated: then no day matters)."""
    newest = int(segment.doc_updated.max()) if segment.n_docs else 0
    return max(1, min(today, newest)) if newest > 0 else 1


def champion_lists(segment: SegmentArrays, today: int, *, min_df: int | None = None,
                   count: int | None = None) -> ChampionLists:
    """The champion lists of ``segment`` (module docstring) for queries on ``today`` or
    later. ``min_df``/``count`` default to ``CHAMPION_MIN_DF``/``CHAMPIONS`` (read at
    call time). Cost: one pass over the listed terms' postings, linear-time selections."""
    min_df = CHAMPION_MIN_DF if min_df is None else min_df
    count = CHAMPIONS if count is None else count
    if not 2 <= count < min_df:
        raise ValueError(f"champions per term ({count}) must be in 2..{min_df - 1}")
    day = champion_day(segment, today)
    ptr = np.asarray(segment.term_ptr)
    listed = np.flatnonzero(np.diff(ptr) >= min_df)
    n_docs = segment.n_docs
    total = int(segment.doc_len.sum(dtype=np.int64))
    norm = length_norm(segment.doc_len, total / n_docs if n_docs > 0 and total > 0 else 1.0)
    updated = np.asarray(segment.doc_updated, dtype=np.int64)
    weight = np.asarray(segment.doc_weight, dtype=np.float64)
    constant = (updated <= 0) | (updated > day)  # freshness 1 at most, on any day
    at_floor = np.where(constant, weight, weight * FRESHNESS_FLOOR)
    decaying = np.where(constant, weight, weight * np.exp2((updated - day) / HALF_LIFE))
    docs = np.empty((listed.shape[0], count), dtype=np.uint32)
    bounds = np.empty((listed.shape[0], 4), dtype=np.float64)
    by_b = count // 2
    for i, tid in enumerate(listed.tolist()):
        start, end = int(ptr[tid]), int(ptr[tid + 1])
        post_doc = np.asarray(segment.post_doc[start:end]).astype(np.intp)
        tf = np.asarray(segment.post_tf[start:end]).astype(np.float64)
        saturation = tf / (tf + norm[post_doc])
        a = saturation * at_floor[post_doc]
        b = saturation * decaying[post_doc]
        size = b.shape[0]
        chosen = np.zeros(size, dtype=np.bool_)
        chosen[np.argpartition(b, size - by_b)[size - by_b:]] = True
        others = np.flatnonzero(~chosen)
        fill = count - by_b
        chosen[others[np.argpartition(a[others], others.shape[0] - fill)[-fill:]]] = True
        docs[i] = post_doc[chosen]  # ascending: postings are sorted by doc
        bounds[i] = (a[~chosen].max(), b[~chosen].max(), a.max(), b.max())
    return ChampionLists(day, count, listed.astype(np.uint32), docs.ravel(), bounds.ravel())
