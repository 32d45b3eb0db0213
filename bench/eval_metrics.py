"""Retrieval metrics for the recall evals: R@k, recall_all@k, NDCG@k (binary gains), MRR.

Every function takes ``ranked`` (result ids, best first; duplicates count once, at their
first position) and ``relevant`` (the set of ids that should be found). A query with no
relevant ids is not scorable: the functions return 0.0 and ``summarise`` callers are
expected to leave such queries out (the harnesses count them separately).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence


def _dedup(ranked: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in ranked:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def recall_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Share of the relevant ids found in the top ``k``."""
    rel = set(relevant)
    if not rel:
        return 0.0
    return len(rel.intersection(_dedup(ranked)[:k])) / len(rel)


def recall_all_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """1.0 when every relevant id is in the top ``k``, else 0.0."""
    rel = set(relevant)
    if not rel:
        return 0.0
    return 1.0 if rel.issubset(_dedup(ranked)[:k]) else 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Normalised discounted cumulative gain with binary relevance, cut at ``k``."""
    rel = set(relevant)
    if not rel:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(_dedup(ranked)[:k]) if item in rel)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), k)))
    return dcg / ideal


def reciprocal_rank(ranked: Sequence[str], relevant: Iterable[str]) -> float:
    """1 / rank of the first relevant id (0.0 when none is ranked)."""
    rel = set(relevant)
    for i, item in enumerate(_dedup(ranked)):
        if item in rel:
            return 1.0 / (i + 1)
    return 0.0


def first_rank(ranked: Sequence[str], relevant: Iterable[str]) -> int | None:
    """1-based rank of the first relevant id, or None."""
    rr = reciprocal_rank(ranked, relevant)
    return round(1.0 / rr) if rr else None


def score_query(ranked: Sequence[str], relevant: Iterable[str],
                ks: Sequence[int] = (5, 10)) -> dict[str, float]:
    """Every metric for one query: ``R@k`` and ``all@k`` per k, ``NDCG@10``, ``MRR``."""
    rel = set(relevant)
    out: dict[str, float] = {}
    for k in ks:
        out[f"R@{k}"] = recall_at_k(ranked, rel, k)
        out[f"all@{k}"] = recall_all_at_k(ranked, rel, k)
    out["NDCG@10"] = ndcg_at_k(ranked, rel, 10)
    out["MRR"] = reciprocal_rank(ranked, rel)
    return out


def mean_metrics(rows: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Column means of per-query metric dicts (plus ``n``, the number of queries)."""
    rows = list(rows)
    if not rows:
        return {"n": 0}
    keys = list(rows[0])
    out: dict[str, float] = {k: sum(r[k] for r in rows) / len(rows) for k in keys}
    out["n"] = len(rows)
    return out


def summarise(rows: Iterable[tuple[str, Mapping[str, float]]]) -> dict[str, dict[str, float]]:
    """Means overall and per group: ``rows`` are ``(group, metrics)`` pairs."""
    rows = list(rows)
    out = {"overall": mean_metrics(m for _, m in rows)}
    for group in sorted({g for g, _ in rows}):
        out[group] = mean_metrics(m for g, m in rows if g == group)
    return out


def paired_permutation_p(a: Sequence[float], b: Sequence[float], *, rounds: int = 10_000,
                         seed: int = 19) -> float:
    """Two-sided p-value of a paired sign-flip permutation test on the mean of ``a - b``
    (per-query scores of two systems on the same queries): the share of ``rounds``
    random sign flips of the differences whose mean is at least as far from 0 as the
    observed one (counting the observed, so never 0). Seeded: the same inputs give the
    same p. 1.0 when every difference is 0."""
    import random

    if len(a) != len(b):
        raise ValueError("paired scores must have the same length")
    diffs = [x - y for x, y in zip(a, b, strict=True) if x != y]
    if not diffs:
        return 1.0
    observed = abs(sum(diffs))
    rng = random.Random(seed)
    hits = 1
    for _ in range(rounds):
        total = sum(d if rng.random() < 0.5 else -d for d in diffs)
        if abs(total) >= observed - 1e-12:
            hits += 1
    return hits / (rounds + 1)
