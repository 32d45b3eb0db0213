"""Key-field boost: a note whose title or aliases hold the query's words ranks higher.

A ranker scores the note's whole text, where a word of the title weighs about what the
same word weighs in the body: a name that is in half the notes (a person the memory is
mostly about, a project) has a low idf and barely moves the score, yet "what did Joanna
cook" is far more likely answered by a note titled "Joanna — 2 May 2022" than by one
that merely mentions her. So recall asks the ranker for the best ``RERANK_DEPTH``
documents, multiplies each score by ``boost ** n`` and keeps the best ``limit``: ``n`` is
how many of the query's own terms the note's title and aliases hold, or 1 when it holds
none of them but holds an expansion (another name of an entity the query names, which
stands in for the query's words and never adds to them: "what discount did VSYS offer"
lifts the note titled "Renewal call with Vantage Systems" as much as the one whose alias
is VSYS). It works after any ranker: a ``KeyFieldRanker`` (bm25) says from its own
index which query terms each document's title and aliases hold, so only the notes kept
are read (warm recall p50 at 100k notes 2.1 -> 1.4 ms, ``bench/perf_recall.py``); for
another ranker the notes are read and their key fields parsed.

On the LoCoMo conversations (``bench/eval_recall.py``, layout ``turn+context``) this
lifted R@5 0.673 -> 0.709 and R@10 0.757 -> 0.794, multi-hop R@5 0.288 -> 0.364; the
gold set stays at 1.00. ``key_field_boost`` in the config file sets the factor
(``DEFAULT_BOOST``; 1 turns the feature off).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from echo_core.context import EchoContext

#: ``keyed(paths, terms)`` of ``reranked``: which of ``terms`` each path's key fields hold,
#: from the ranker's index (a path absent: not known there), or None (no key fields kept).
KeyTerms = Callable[[Sequence[str], Sequence[str]], Mapping[str, frozenset[str]] | None]

__all__ = ["DEFAULT_BOOST", "READ_BATCH", "RERANK_DEPTH", "KeyTerms", "boost_factor", "key_matches",
           "matched_count", "reranked",
           "search_depth"]

#: The factor per query term found in a note's title or aliases.
DEFAULT_BOOST = 1.5
#: How many of the ranker's best documents are reranked (at least the recall's limit).
RERANK_DEPTH = 30
#: Notes read at a time beyond the first ``limit`` while reranking.
READ_BATCH = 4


def boost_factor(ctx: EchoContext) -> float:
    """The configured ``key_field_boost`` (``DEFAULT_BOOST`` when unset or not a number
    of at least 1)."""
    raw = ctx.config.raw.get("key_field_boost", DEFAULT_BOOST)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return DEFAULT_BOOST
    return value if value >= 1.0 else DEFAULT_BOOST


def search_depth(ctx: EchoContext, limit: int) -> int:
    """How many documents to ask the ranker for: ``limit``, or ``RERANK_DEPTH`` when the
    boost is on."""
    return max(limit, RERANK_DEPTH) if boost_factor(ctx) > 1.0 else limit


def key_matches(ctx: EchoContext, path: str, text: str, wanted: Sequence[str],
                expansions: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """The query terms ``wanted`` and the ``expansions`` (a phrase: all of its words) that
    the note's title or aliases hold, each in query order."""
    keys = ctx.note_views.key_terms(text, path, ctx.tokenizer)
    return ([t for t in wanted if t in keys],
            [e for e in expansions if all(w in keys for w in e.split(" "))])


def matched_count(found: tuple[list[str], list[str]]) -> int:
    """``n`` of the boost: the query terms matched, else 1 for any expansion matched."""
    return len(found[0]) or (1 if found[1] else 0)


def reranked(ctx: EchoContext, scored: Sequence[tuple[str, float]],
             read: Callable[[list[str]], Mapping[str, str | None]], wanted: Sequence[str],
             expansions: Sequence[str], limit: int,
             keyed: KeyTerms | None = None
             ) -> tuple[list[tuple[str, float]], dict[str, str | None]]:
    """The best ``limit`` of ``scored`` (best first) after the key-field boost, ties by
    path, and the texts read. ``read(paths)`` gives notes' texts (None: gone; such a
    document keeps its score).

    ``keyed(paths, terms)``, when given, says from the ranker's own index which of
    ``terms`` each path's title and aliases hold (``KeyFieldRanker``; None or a path
    left out: read the note instead): then only the notes kept are read. Without it the
    notes are read lazily, best first, ``READ_BATCH`` at a time: it stops once no
    document left could make the top ``limit`` even with every query term in its title
    (the same answer as boosting all of ``scored``, fewer files read)."""
    texts: dict[str, str | None] = {}
    factor = boost_factor(ctx)
    if factor <= 1.0 or not wanted:
        top = list(scored[:limit])
        texts.update(read([p for p, _ in top]))
        return top, texts
    if keyed is not None:
        indexed = _boosted_by_index(scored, keyed, wanted, expansions, factor)
        if indexed is not None:
            out, unknown = indexed
            if unknown:
                texts.update(read(unknown))
                for path in unknown:
                    text = texts.get(path)
                    n = matched_count(key_matches(ctx, path, text, wanted, expansions)
                                      ) if text is not None else 0
                    out[path] *= factor ** n if n else 1.0
            top = sorted(out.items(), key=lambda h: (-h[1], h[0]))[:limit]
            missing = [p for p, _ in top if p not in texts]
            if missing:
                texts.update(read(missing))
            return top, texts
    ceiling = factor ** max(len(wanted), 1)
    out_list: list[tuple[str, float]] = []
    at = 0
    while at < len(scored):
        if len(out_list) >= limit and scored[at][1] * ceiling < out_list[limit - 1][1]:
            break
        batch = list(scored[at:at + max(limit if at == 0 else READ_BATCH, 1)])
        at += len(batch)
        texts.update(read([p for p, _ in batch]))
        for path, score in batch:
            text = texts.get(path)
            n = matched_count(key_matches(ctx, path, text, wanted, expansions)
                              ) if text is not None else 0
            out_list.append((path, score * factor ** n if n else score))
        out_list.sort(key=lambda h: (-h[1], h[0]))
    return out_list[:limit], texts


def _boosted_by_index(scored: Sequence[tuple[str, float]], keyed: KeyTerms,
                      wanted: Sequence[str], expansions: Sequence[str], factor: float
                      ) -> tuple[dict[str, float], list[str]] | None:
    """Each path's score boosted from the ranker's key terms, and the paths it does not
    hold (left unboosted here); None when the ranker keeps no key fields."""
    needed = list(dict.fromkeys([*wanted, *(w for e in expansions for w in e.split(" "))]))
    held = keyed([p for p, _ in scored], needed)
    if held is None:
        return None
    out: dict[str, float] = {}
    unknown: list[str] = []
    for path, score in scored:
        keys = held.get(path)
        if keys is None:
            unknown.append(path)
            out[path] = score
            continue
        n = matched_count(([t for t in wanted if t in keys],
                           [e for e in expansions if all(w in keys for w in e.split(" "))]))
        out[path] = score * factor ** n if n else score
    return out, unknown
