"""A query as the ranker evaluates it: distinct terms with their summed weights."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from echo_core import WeightedTerm

__all__ = ["QueryTerm", "merge_query"]


@attrs.frozen
class QueryTerm:
    """A distinct query term: summed weight; ``plain`` unless every copy was boost-only."""

    term: str
    weight: float
    plain: bool


def merge_query(terms: Sequence[WeightedTerm]) -> list[QueryTerm]:
    """Fold duplicate terms (weights summed) in first-seen order; drop empty terms and
    terms whose summed weight is not positive (they could only lower scores)."""
    merged: dict[str, tuple[float, bool]] = {}
    for t in terms:
        if t.term:
            weight, plain = merged.get(t.term, (0.0, False))
            merged[t.term] = (weight + float(t.weight), plain or not t.boost_only)
    return [QueryTerm(term, w, plain) for term, (w, plain) in merged.items() if w > 0]
