"""A segment's champion lists as the numpy-free search reads them (``cold_pruned``).

The ``champ_*`` arrays (``segment_format``; written by ``champions.champion_lists``) as
typed ``memoryview``s over the mapped files: a term's list is a binary search over the
listed term ids, its champions a slice, its bounds four floats.
"""

from __future__ import annotations

import bisect

from plugins.recall_bm25.scalar_math import decay

__all__ = ["ChampionView"]


class ChampionView:
    """The champion lists of one segment (``champions``'s module docstring): ``day`` (the
    bounds' freshness day), ``count`` (champions per listed term), and per listed term
    its champions and the bounds of its static impacts on a later day. No numpy."""

    def __init__(self, day: int, count: int, terms: memoryview, docs: memoryview,
                 bounds: memoryview) -> None:
        self.day, self.count = day, count
        self._terms, self._docs, self._bounds = terms, docs, bounds

    def slot(self, tid: int) -> int | None:
        """The place of term id ``tid`` among the listed terms, None when it has no list."""
        pos = bisect.bisect_left(self._terms, tid)
        return pos if pos < len(self._terms) and self._terms[pos] == tid else None

    def docs(self, slot: int) -> memoryview:
        """The champions (ascending doc ids) of the listed term at ``slot``."""
        return self._docs[slot * self.count:(slot + 1) * self.count]

    def rest(self, slot: int, today: int) -> float:
        """An upper bound of the static impact on ``today`` (>= ``day``) of any posting of
        the listed term at ``slot`` that is not a champion."""
        return self._bound(4 * slot, today)

    def top(self, slot: int, today: int) -> float:
        """An upper bound of the static impact on ``today`` (>= ``day``) of any posting of
        the listed term at ``slot``."""
        return self._bound(4 * slot + 2, today)

    def _bound(self, at: int, today: int) -> float:
        """``max(a, b x decay(today - day))`` of the (a, b) pair stored at ``at``."""
        return max(self._bounds[at], self._bounds[at + 1] * decay(today - self.day))
