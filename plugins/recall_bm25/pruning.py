"""Top-k pruning of the base segment's scoring: block upper bounds and MaxScore.

A query with a common term would otherwise score every one of its postings (~1 ms for
100k postings). Instead ``pruned_base`` scores exactly only the documents that can still
reach the ``limit`` best, and returns the same (ids, scores) the exhaustive scoring keeps
for them, bit for bit: each candidate's score is computed by the same operations in the
same order (``term_contributions`` per term, plain terms first in query order, boosts
only where a plain term matched, then the prior).

Bounds. Each term's postings are cut in blocks of ``BLOCK``; ``BlockBounds`` keeps, per
block, the largest static impact ``weight x freshness(t0) x tf / (tf + norm0)`` of its
postings (and its ``CHAMPIONS`` docs of highest impact), where ``norm0`` uses the base's
own average length ``avgdl0`` and ``t0`` is the day of the search. They are computed
once per term (on the first query that needs them: one pass over its postings) and kept
for the base's life and that day (a search on another day computes them afresh): they
stay valid as the delta changes, ``scale`` widening them for the snapshot's average
length (``max(1, avgdl / avgdl0)``: a shorter average lowers norms by that ratio at
most). Tombstoned docs only lower scores (prior 0), so they never break a bound.

Search. (1) Seed: the best ``seed_blocks`` blocks of each plain term are scored exactly;
their ``limit``-th best score is ``theta``, a lower bound of the final cut. (2) MaxScore:
plain terms sorted by their upper bound; the longest prefix whose bounds sum, with every
boost's, below ``theta`` is non-essential (a doc holding none of the others cannot reach
``theta``); of each
essential plain term, the blocks whose bound plus every other term's bound reaches
``theta`` give the candidates. (3) The candidates are scored exactly, each term's
postings looked up by binary search. Every doc scoring ``>= theta`` is a candidate, so
the top ``limit`` and every tie at its cut are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import numpy as np

from plugins.recall_bm25.scalar_math import SLACK
from plugins.recall_bm25.scoring import (
    K1,
    Floats,
    Ints,
    freshness,
    length_norm,
    term_contributions,
)
from plugins.recall_bm25.segment_reader import BaseSegment

__all__ = ["BLOCK", "CHAMPIONS", "LOOKUP_COST", "PRUNE_MIN_POSTINGS", "BlockBounds", "ScoredTerm",
           "TermBounds", "bounds_of",
           "pruned_base", "score_docs"]

#: Postings per block of the upper bounds.
BLOCK = 64
#: Below this many base postings in a query's plain terms, exhaustive scoring is as
#: fast as pruning (and needs no bounds).
PRUNE_MIN_POSTINGS = 16_384
#: Docs of highest static impact kept per term: a query whose other docs cannot reach
#: the cut these set scores these only.
CHAMPIONS = 256
#: What finding one candidate's tf in one term's postings (a binary search) costs, in
#: postings scored exhaustively: when the candidates the blocks keep (at most ``BLOCK``
#: a block), times the terms, times this, pass the query's postings, ``pruned_base``
#: gives up before gathering them (returns None) and the caller scores every posting
#: (at 100k notes: ~23 ns a lookup, ~4 ns a posting; a query whose common words keep
#: ~all docs took 10-14 ms pruned, ~1 ms exhaustive).
LOOKUP_COST = 6


@attrs.frozen(eq=False)
class TermBounds:
    """One term's static impact bounds: the maximum of each ``BLOCK`` of its postings,
    its ``CHAMPIONS`` highest-impact docs (ascending ids) and the largest impact of the
    others (``rest``; 0.0 when every posting is a champion)."""

    blocks: Floats
    champions: Ints
    rest: float


@attrs.frozen
class ScoredTerm:
    """A query term present in the base: its term id, ``weight x idf`` and plainness."""

    tid: int
    w_idf: float
    plain: bool


class BlockBounds:
    """Per-term block maxima of one base segment's static impacts (see the module
    docstring); computed on first use per term, kept as long as the segment object."""

    def __init__(self, base: BaseSegment, today: int) -> None:
        self._base = base
        self.avgdl0 = base.total_len / base.n_docs if base.n_docs > 0 and base.total_len > 0 \
            else 1.0
        self.t0 = today
        self._static: tuple[Floats, Floats] | None = None
        self._terms: dict[int, TermBounds] = {}

    def _doc_static(self) -> tuple[Floats, Floats]:
        """(weight x freshness at ``t0``, norm at ``avgdl0``) of every doc."""
        if self._static is None:
            arr = self._base.arrays
            self._static = (arr.doc_weight * freshness(arr.doc_updated, self.t0),
                            length_norm(arr.doc_len, self.avgdl0))
        return self._static

    def term(self, tid: int) -> TermBounds:
        """The bounds of one term id (computed on first use: one pass over its postings
        and a linear-time selection of its champions)."""
        found = self._terms.get(tid)
        if found is None:
            prior0, norm0 = self._doc_static()
            post_doc, post_tf = self._base.postings(tid)
            docs = post_doc.astype(np.int64)
            tf = post_tf.astype(np.float64)
            impact = tf / (tf + norm0[docs])
            impact *= prior0[docs]
            blocks = np.maximum.reduceat(impact, np.arange(0, impact.shape[0], BLOCK))
            if impact.shape[0] <= CHAMPIONS:
                found = TermBounds(blocks, docs, 0.0)
            else:
                cut = impact.shape[0] - CHAMPIONS
                order = np.argpartition(impact, cut)
                rest = float(impact[order[:cut]].max())
                found = TermBounds(blocks, np.sort(docs[order[cut:]]), rest)
            self._terms[tid] = found
        return found

    def scale(self, avgdl: float) -> float:
        """The factor making the stored impacts bound those of a snapshot whose average
        length is ``avgdl`` (on the day ``t0``)."""
        return max(1.0, avgdl / self.avgdl0) * SLACK


def bounds_of(base: BaseSegment, today: int) -> BlockBounds:
    """The ``BlockBounds`` of ``base`` on ``today`` (kept in its ``derived``; made again
    when the day changes)."""
    found = base.derived.get("block_bounds")
    if not isinstance(found, BlockBounds) or found.t0 != today:
        found = base.derived["block_bounds"] = BlockBounds(base, today)
    return found


def score_docs(base: BaseSegment, terms: Sequence[ScoredTerm], docs: Ints,
               norm: Floats, prior: Floats) -> Floats:
    """Exact scores of the base docs ``docs`` (ascending, distinct; ``norm`` and ``prior``
    theirs), as the exhaustive scoring computes them: plain terms in order, then boosts
    where a plain term matched, times the prior."""
    sums = np.zeros(docs.shape[0], dtype=np.float64)
    if docs.shape[0] == 0:
        return sums
    wanted = docs.astype(np.uint32)  # search the mapped uint32 postings without a cast
    for plain in (True, False):
        matched = sums > 0.0 if not plain else None
        for t in terms:
            if t.plain is not plain:
                continue
            post_doc, post_tf = base.postings(t.tid)
            if post_doc.shape[0] == 0:
                continue
            pos = np.searchsorted(post_doc, wanted)
            np.minimum(pos, post_doc.shape[0] - 1, out=pos)
            hit = post_doc[pos] == wanted
            if matched is not None:
                hit &= matched
            at = np.flatnonzero(hit)
            sums[at] += term_contributions(post_tf[pos[at]], norm[at], t.w_idf)
    sums *= prior
    return sums


def _block_docs(base: BaseSegment, tid: int, blocks: Ints) -> Ints:
    """The doc ids of the given blocks of one term's postings."""
    post_doc, _ = base.postings(tid)
    offsets = (blocks[:, None] * BLOCK + np.arange(BLOCK)[None, :]).ravel()
    found: Ints = post_doc[offsets[offsets < post_doc.shape[0]]].astype(np.int64)
    return found


def _distinct(parts: list[Ints]) -> Ints:
    ids = np.sort(np.concatenate(parts)) if parts else np.empty(0, np.int64)
    if ids.shape[0] > 1:
        ids = ids[np.concatenate(([True], ids[1:] != ids[:-1]))]
    return ids


def pruned_base(base: BaseSegment, terms: Sequence[ScoredTerm], limit: int, avgdl: float,
                today: int, norm_of: Callable[[Ints], Floats],
                prior_of: Callable[[Ints], Floats]) -> tuple[Ints, Floats] | None:
    """(ids ascending, exact scores) of a superset of the base docs that make the top
    ``limit`` (ties at the cut included), or None when the seeds find fewer than
    ``limit`` positive scores or the MaxScore blocks keep so many candidates that
    scoring every posting costs less (``LOOKUP_COST``): then score exhaustively.
    ``norm_of(ids)`` and ``prior_of(ids)`` give the snapshot's length norms and priors
    of base docs."""
    bounds = bounds_of(base, today)
    factor = bounds.scale(avgdl) * (K1 + 1.0)
    found = [bounds.term(t.tid) for t in terms]
    blocks = [f.blocks * (t.w_idf * factor) for t, f in zip(terms, found, strict=True)]
    tops = [float(b.max()) if b.shape[0] else 0.0 for b in blocks]

    def score(ids: Ints) -> Floats:
        return score_docs(base, terms, ids, norm_of(ids), prior_of(ids))

    seed_ids = _distinct([f.champions for t, f in zip(terms, found, strict=True) if t.plain])
    seed_scores = score(seed_ids)
    positive = seed_scores[seed_scores > 0.0]
    if positive.shape[0] < limit:
        return None
    theta = float(np.partition(positive, positive.shape[0] - limit)[positive.shape[0] - limit])
    # A doc no plain term has as a champion scores at most every plain term's ``rest``
    # plus every boost's top.
    outside = sum(f.rest * t.w_idf * factor if t.plain else top
                  for t, f, top in zip(terms, found, tops, strict=True))
    if outside < theta:
        return seed_ids, seed_scores

    # MaxScore: a doc holding none of the essential plain terms scores at most the
    # non-essential plain terms' tops plus every boost's, kept under ``theta``.
    non_essential: set[int] = set()
    below = sum(top for t, top in zip(terms, tops, strict=True) if not t.plain)
    for i in sorted((i for i, t in enumerate(terms) if t.plain), key=lambda i: tops[i]):
        if below + tops[i] >= theta:
            break
        below += tops[i]
        non_essential.add(i)
    total = sum(tops)
    kept: list[tuple[int, Ints]] = []  # (term id, its blocks that can reach theta)
    for i, (t, b) in enumerate(zip(terms, blocks, strict=True)):
        if t.plain and i not in non_essential:
            reaching = np.flatnonzero(b + (total - tops[i]) >= theta)
            if reaching.shape[0]:
                kept.append((t.tid, reaching))
    at_most = seed_ids.shape[0] + BLOCK * sum(reaching.shape[0] for _, reaching in kept)
    if at_most * len(terms) * LOOKUP_COST > sum(base.df(t.tid) for t in terms):
        return None  # the blocks keep most docs: scoring every posting costs less
    ids = _distinct([seed_ids, *(_block_docs(base, tid, reaching) for tid, reaching in kept)])
    return ids, score(ids)
