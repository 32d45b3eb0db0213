"""BM25 x prior, vectorised (SPEC §3.1). Pure functions over numpy arrays; no I/O.

score(d) = prior(d) x sum over query terms t matching d of
    w_t x idf(t) x tf x (K1 + 1) / (tf + norm(d)),   norm(d) = K1 x (1 - B + B x len(d) / avgdl)
idf(t)   = ln(1 + (N - df + 0.5) / (df + 0.5))          (always > 0)
prior(d) = doc_weight(d) x freshness(d)
freshness = max(FRESHNESS_FLOOR, 0.5 ** (age_days / HALF_LIFE_DAYS)); age < 0 counts as 0;
an unknown date (ordinal 0) has freshness 1.0.

``boost_only`` terms add to a document's sum only when a plain term matched it.
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from echo_core import FRESHNESS_FLOOR, FRESHNESS_HALF_LIFE_DAYS
from plugins.recall_bm25.scalar_math import FRESHNESS_TABLE, K1, B, idf, norm_terms

__all__ = [
    "FRESHNESS_FLOOR",
    "HALF_LIFE_DAYS",
    "K1",
    "SPARSE_RATIO",
    "TIE_SLACK",
    "B",
    "Floats",
    "Ints",
    "Postings",
    "accumulate",
    "freshness",
    "idf",
    "length_norm",
    "term_contributions",
    "top_k",
]

#: Days after which the freshness prior halves.
HALF_LIFE_DAYS: float = FRESHNESS_HALF_LIFE_DAYS
#: How many extra candidates tied at the top-k cut are kept for tie-breaking by path.
TIE_SLACK = 256
#: ``accumulate`` sorts (sparse) instead of scanning all ``size`` ids (dense) when
#: postings x SPARSE_RATIO < size: a sort of p ids beats an O(size) pass for small p.
SPARSE_RATIO = 32

Floats: TypeAlias = npt.NDArray[np.float64]
Ints: TypeAlias = npt.NDArray[np.int64]
#: (doc ids, per-posting contributions) of one query term.
Postings: TypeAlias = tuple[Ints, Floats]


def length_norm(doc_len: npt.ArrayLike, avgdl: float) -> Floats:
    """``K1 x (1 - B + B x len / avgdl)`` per document."""
    scale, offset = norm_terms(avgdl)
    norm = np.asarray(doc_len, dtype=np.float64) * scale
    norm += offset
    return norm


def term_contributions(tf: npt.ArrayLike, norm: Floats, weight_idf: float) -> Floats:
    """``weight_idf x tf x (K1 + 1) / (tf + norm)``, one value per posting."""
    tf64 = np.asarray(tf, dtype=np.float64)
    denominator = tf64 + norm
    tf64 *= weight_idf * (K1 + 1.0)
    tf64 /= denominator
    return tf64


_FRESHNESS = np.array(FRESHNESS_TABLE, dtype=np.float64)


def freshness(updated: npt.ArrayLike, today: int) -> Floats:
    """The freshness prior of each day ordinal (0 = unknown -> 1.0) against ``today``:
    ``scalar_math.FRESHNESS_TABLE`` by age, so it equals ``freshness_of`` bit for bit."""
    days = np.asarray(updated, dtype=np.int64)
    age = np.clip(today - days, 0, _FRESHNESS.shape[0] - 1)
    fresh: Floats = _FRESHNESS[age]
    fresh[days <= 0] = 1.0
    return fresh


def accumulate(plain: list[Postings], boost: list[Postings], size: int | None
               ) -> tuple[Ints | None, Floats]:
    """Sum contributions per doc id; only ids some ``plain`` posting matched score > 0.

    Contributions must be > 0; within one term a doc id appears once. ``size``: ids are
    dense in ``0..size-1`` (None: sparse, e.g. SQLite row ids). Returns (ids, sums):
    dense — ids None and ``sums[id]`` for every id (0 = unmatched); sparse — the matched
    ids ascending and their sums. Dense costs O(p + size) (``np.add.at`` per term into one
    array, no concatenation); sparse O(p log p); dense only when p x SPARSE_RATIO >= size.
    """
    if not plain:
        return np.empty(0, np.int64), np.empty(0, np.float64)
    count = sum(p[0].shape[0] for p in plain)
    if size is not None and count * SPARSE_RATIO >= size:
        sums = np.zeros(size, dtype=np.float64)
        for docs, contrib in plain:
            np.add.at(sums, docs, contrib)
        if boost:
            matched = sums > 0.0
            for docs, contrib in boost:
                np.add.at(sums, docs, contrib)
            sums *= matched
        return None, sums
    ids = np.sort(np.concatenate([p[0] for p in plain]))  # not np.unique: it imports numpy.ma
    if ids.shape[0] > 1:
        ids = ids[np.concatenate(([True], ids[1:] != ids[:-1]))]
    found = np.zeros(ids.shape[0], dtype=np.float64)
    for docs, contrib in plain:
        np.add.at(found, np.searchsorted(ids, docs), contrib)
    for docs, contrib in boost:
        slot = np.minimum(np.searchsorted(ids, docs), ids.shape[0] - 1)
        hit = ids[slot] == docs
        np.add.at(found, slot[hit], contrib[hit])
    return ids, found


def top_k(scores: Floats, limit: int) -> Ints:
    """Positions of the ``limit`` highest positive scores, best first.

    When several scores tie at the cut, all of them (up to ``TIE_SLACK`` extra) are
    returned, so the caller can break ties by a stable key (the path) and cut to
    ``limit``. O(n) selection + O(k log k) sort. The selection runs on the positive
    scores only when they are a minority: ``np.partition`` degrades on the many equal
    zeros of a mostly-unmatched dense array (~1.5 ms at 100k), while copying out a
    majority of positives costs more than it saves.
    """
    n = scores.shape[0]
    if n == 0 or limit <= 0:
        return np.empty(0, np.int64)
    positive = scores > 0.0
    m = int(np.count_nonzero(positive))
    if m <= limit:
        best = np.flatnonzero(positive)
    elif 2 * m < n:
        candidates = np.flatnonzero(positive)
        values = scores[candidates]
        kth = float(np.partition(values, m - limit)[m - limit])
        best = candidates[values >= kth]
        if best.shape[0] > limit + TIE_SLACK:
            best = candidates[np.argpartition(-values, limit - 1)[:limit]]
    else:
        kth = float(np.partition(scores, n - limit)[n - limit])  # > 0: m > limit
        best = np.flatnonzero(scores >= kth)
        if best.shape[0] > limit + TIE_SLACK:
            best = np.argpartition(-scores, limit - 1)[:limit]
    order = np.argsort(-scores[best], kind="stable")
    found: Ints = best[order]
    return found
