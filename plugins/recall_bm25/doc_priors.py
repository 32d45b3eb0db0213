"""The prior each indexed note is scored with, by path (``Bm25Index.priors_of``).

BM25's score of a note is its text's match times its prior: the static weight the core
gives it (``IndexDoc.weight``: corpus, status and question weights) times its freshness
on the index's day. A ranker that finds notes another way (``hybrid``'s vectors) asks for
the same prior, so a superseded or archived note found on meaning alone weighs what BM25
would weigh it. The live version counts: a delta doc's row, else the base's unless it was
tombstoned. No numpy (a cold process may ask).
"""

from __future__ import annotations

from collections.abc import Sequence

from plugins.recall_bm25.delta_store import DeltaState, DeltaStore
from plugins.recall_bm25.scalar_math import freshness_of
from plugins.recall_bm25.segment_reader import BaseSegment

__all__ = ["static_priors"]


def static_priors(store: DeltaStore, base: BaseSegment, state: DeltaState, live: bool,
                  paths: Sequence[str], today: int) -> dict[str, float]:
    """``path -> weight x freshness`` for each indexed one of ``paths`` (a path the index
    does not hold is left out). Call inside a read transaction of ``store``, with the
    view ``Bm25Index._view_state`` gives for it."""
    found: dict[str, float] = {}
    if live and state.n_delta:
        for path, (weight, day) in store.priors_of(paths).items():
            found[path] = weight * freshness_of(day, today)
    in_base: dict[str, int] = {}
    for path in paths:
        held = None if path in found else base.find(path)
        if held is not None:
            in_base[path] = held
    if not in_base:
        return found
    gone = store.tombstoned_of(list(in_base.values())) if live and state.n_tomb else set()
    weights, days = base.doc_weights(), base.doc_days()
    for path, doc in in_base.items():
        if doc not in gone:
            found[path] = float(weights[doc]) * freshness_of(int(days[doc]), today)
    return found
