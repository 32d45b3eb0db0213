"""What ``recall --as-of`` ranks: each note's text as it stood on the day asked about.

The ranker knows the notes' text now. A note rewritten by ``evolve`` (or a ``restore``)
since the day held an archived version then, so ``recall_as_of`` widens and corrects what
the ranker gives:

* ``notes_with_old_words``: the notes with an archived version holding one of the query's
  terms that the ranker did not bring (their text now lacks the words): candidates too, so
  a query in a note's old wording finds it as of a day that wording was current;
* ``rescored``: a hit answered by an archived version is scored on that version's text
  (``local_score``: BM25's term saturation and length norm over the query's weighted
  terms), brought to the ranker's scale by the median ratio of the ranker's score to the
  local score of the hits answered by their text now; one whose version holds none of the
  query's terms is dropped when the ranker's hits always hold one
  (``hits_hold_query_words``: bm25), as its text then did not match. A semantic ranker's
  hit keeps its score (it ranks meaning, not words).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from echo_core.frontmatter import split_frontmatter
from echo_core.ops.evolve import ARCHIVE_FOLDER
from echo_core.scoring import BM25_B, BM25_K1

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.protocols import Tokenizer

__all__ = ["ThenText", "local_score", "notes_with_old_words", "rescored"]


def _live_path(archive: str) -> str:
    """The note path an archive file mirrors (``_agent/archive/<path>--<day>[-N].md``)."""
    return archive[len(ARCHIVE_FOLDER) + 1:].rsplit("--", 1)[0] + ".md"


def _holds(tokenizer: Tokenizer, text: str, wanted: frozenset[str]) -> bool:
    among = getattr(tokenizer, "terms_among", None)
    found = among(text, wanted) if among is not None else wanted.intersection(
        tokenizer.tokenize(text))
    return bool(found)


def notes_with_old_words(ctx: EchoContext, listing: Sequence[str], terms: Iterable[str],
                         known: Iterable[str]) -> list[str]:
    """The paths of the notes, other than ``known``, that an archive file of
    ``listing`` (the files under the archive folder) mirrors and whose archived text
    holds one of ``terms``; those that exist now, sorted. Reads the archive files."""
    wanted = frozenset(terms)
    if not wanted:
        return []
    skip = set(known)
    files = [p for p in listing if p.endswith(".md") and _live_path(p) not in skip]
    texts = ctx.vault.storage.read_many(files) if files else {}
    found = {_live_path(p) for p, text in texts.items()
             if text is not None and _holds(ctx.tokenizer, split_frontmatter(text)[1], wanted)}
    return sorted(p for p in found if ctx.vault.storage.exists(p))


def local_score(tokenizer: Tokenizer, text: str, weights: dict[str, float],
                avg_len: float) -> float:
    """BM25 of ``text``'s body for the query ``weights`` (term -> weight) without idf:
    each term's ``weight x tf x (K1 + 1) / (tf + K1 x (1 - B + B x len / avg_len))``."""
    tokens = tokenizer.tokenize(split_frontmatter(text)[1])
    counts = Counter(t for t in tokens if t in weights)
    if not counts:
        return 0.0
    norm = BM25_K1 * (1 - BM25_B + BM25_B * len(tokens) / max(avg_len, 1.0))
    return sum(weights[t] * n * (BM25_K1 + 1) / (n + norm) for t, n in counts.items())


class ThenText:
    """One candidate of an as-of recall: the ``score`` the ranker gave the note (None
    when it did not bring it), its text ``then`` and whether that is an archived
    version (``archived``)."""

    __slots__ = ("archived", "key", "score", "then")

    def __init__(self, key: str, score: float | None, then: str, archived: bool) -> None:
        self.key, self.score, self.then, self.archived = key, score, then, archived


def rescored(tokenizer: Tokenizer, candidates: Sequence[ThenText],
             weights: dict[str, float], lexical: bool) -> dict[str, float]:
    """Each candidate's score as of the day (module docstring), by ``key``; a candidate
    left out was dropped (``lexical``: the ranker's hits always hold a query term)."""
    lengths = [len(tokenizer.tokenize(split_frontmatter(c.then)[1])) for c in candidates]
    avg_len = sum(lengths) / len(lengths) if lengths else 1.0
    local = {c.key: local_score(tokenizer, c.then, weights, avg_len) for c in candidates}
    ratios = [c.score / local[c.key] for c in candidates
              if not c.archived and c.score is not None and local[c.key] > 0]
    scale = statistics.median(ratios) if ratios else 1.0
    out: dict[str, float] = {}
    for c in candidates:
        if c.score is not None and (not c.archived or not lexical):
            out[c.key] = c.score  # its text now, or a semantic ranker's: kept as ranked
        elif local[c.key] > 0:
            out[c.key] = scale * local[c.key]
    return out
