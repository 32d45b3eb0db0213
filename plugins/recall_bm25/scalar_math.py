"""The numbers of BM25 x prior that both search paths share, without numpy.

numpy's vectorised ``log1p`` and ``exp2`` (SIMD code on CPUs with AVX-512) differ from
the C library's by one unit in the last place for a few percent of inputs. The numpy
search (``search``) and the small-query search (``small_search``) must score alike to the
last bit, so both take ``idf`` and the freshness of a day from here: ``math.log1p``, and
``FRESHNESS_TABLE`` (``math.exp2``, one entry per day of age until the floor).
"""

from __future__ import annotations

import math

from echo_core import BM25_B, BM25_K1, FRESHNESS_FLOOR, FRESHNESS_HALF_LIFE_DAYS

__all__ = ["FRESHNESS_TABLE", "HALF_LIFE", "K1", "SCORING_MODEL", "SLACK", "B", "decay",
           "freshness_of", "idf", "norm_terms"]

#: BM25 term-frequency saturation and length normalisation (SPEC §3.1).
K1: float = BM25_K1
B: float = BM25_B
#: Days after which the freshness prior halves (until the floor).
HALF_LIFE: float = FRESHNESS_HALF_LIFE_DAYS
#: The constants a stored score bound depends on (``champions``): bounds stored under
#: another model are not used.
SCORING_MODEL = f"k1={K1!r} b={B!r} half-life={HALF_LIFE!r} floor={FRESHNESS_FLOOR!r}"
#: Score bounds are widened by this factor, against rounding in the few operations they
#: take (``pruning``, ``cold_pruned``).
SLACK = 1.0 + 1e-9


def _freshness_table() -> tuple[float, ...]:
    """max(floor, 2 ** (-age / half-life)) for age 0, 1, ... up to the first age at the
    floor (the last entry is the floor: every older age has it too)."""
    if not FRESHNESS_FLOOR > 0:
        raise ValueError("the freshness floor must be > 0")
    table = []
    age = 0
    while True:
        value = max(FRESHNESS_FLOOR, math.exp2(-float(age) / FRESHNESS_HALF_LIFE_DAYS))
        table.append(value)
        if value == FRESHNESS_FLOOR:
            return tuple(table)
        age += 1


#: The freshness prior by age in days (index), the floor from the last entry on.
FRESHNESS_TABLE: tuple[float, ...] = _freshness_table()
_LAST_AGE = len(FRESHNESS_TABLE) - 1


def freshness_of(updated: int, today: int) -> float:
    """The freshness prior of a day ordinal against ``today`` (0 = unknown -> 1.0; a
    future date counts as age 0)."""
    if updated <= 0:
        return 1.0
    return FRESHNESS_TABLE[min(max(today - updated, 0), _LAST_AGE)]


def decay(days: int) -> float:
    """``2 ** (-days / HALF_LIFE)``, the unfloored freshness lost over ``days`` days."""
    return math.exp2(-float(days) / HALF_LIFE)


def idf(n_docs: int, df: int) -> float:
    """BM25 idf of a document frequency, with ``df`` clamped to ``0..n_docs``."""
    d = min(max(df, 0), n_docs)
    return math.log1p((n_docs - d + 0.5) / (d + 0.5))


def norm_terms(avgdl: float) -> tuple[float, float]:
    """``(scale, offset)`` with ``norm(len) = len x scale + offset`` =
    ``K1 x (1 - B + B x len / avgdl)``, computed as the numpy path computes it."""
    return K1 * B / avgdl, K1 * (1.0 - B)
