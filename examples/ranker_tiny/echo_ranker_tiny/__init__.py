"""echo_ranker_tiny: an in-memory TF-IDF ranker for echo-memory (``recall = "tiny"``)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

from echo_core import IndexDoc, RankerFactory, Tokenizer, WeightedTerm, hookimpl


class TinyRanker:
    """A plain ``Ranker``: score = sum of weight x tf x idf over the query terms a document
    holds, counted only when it holds a term that is not ``boost_only``."""

    def __init__(self, tokenizer: Tokenizer, state_dir: str = "") -> None:
        self.tokenize = tokenizer.tokenize
        self.docs: dict[str, Counter[str]] = {}

    def upsert(self, doc: IndexDoc) -> None:
        self.docs[doc.path] = Counter(self.tokenize(doc.text))

    def remove(self, path: str) -> None:
        self.docs.pop(path, None)

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        df = Counter(t.term for counts in self.docs.values() for t in terms if t.term in counts)
        idf = {term: math.log(1 + len(self.docs) / n) for term, n in df.items()}
        scores: dict[str, float] = {}
        for path, counts in self.docs.items():
            hits = [(t, t.weight * counts[t.term] * idf[t.term]) for t in terms if t.term in counts]
            if any(not t.boost_only for t, _ in hits):
                scores[path] = sum(score for _, score in hits)
        return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]


@hookimpl
def register_rankers(register: Callable[[str, RankerFactory], None]) -> None:
    """Register ``tiny``; the core builds it from the corpus and keeps it current."""
    register("tiny", TinyRanker)
