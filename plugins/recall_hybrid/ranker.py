"""``HybridRanker``: BM25 fused with MiniLM sentence vectors (config ``recall = "hybrid"``).

It wraps the ``bm25`` ranker the core hands it (the factory ``wraps = "bm25"``; the same
index plain ``bm25`` keeps, under ``<state_dir>/bm25``) and keeps one vector per note in
a ``VectorStore`` under ``<state_dir>/hybrid``. The core keeps both current: every
``upsert`` / ``remove`` goes to each, and ``needs_rebuild`` is True when either must be
rebuilt, so the vectors are built (with progress) by ``reindex`` or the first recall.

``search_text(query, terms, limit)`` (recall calls it: ``echo_core.TextRanker``) takes the
best ``FUSION_DEPTH`` of each side and fuses their scores: ``bm25 / best bm25 +
DENSE_WEIGHT x cosine`` (cosines under 0 add nothing), so BM25's priors still order what
both sides find, and a note that shares no word with the query can still come in on
meaning. The fused scores are multiplied back by the best BM25 score, so they stay on
BM25's scale (the prompt hook's absolute floor keeps its meaning: a note found on
meaning alone scores ``DENSE_WEIGHT x cosine x best``, under it when BM25 found little). ``search(terms, limit)`` (no query text) is BM25's answer.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from echo_core import IndexDoc, Ranker, WeightedTerm

if TYPE_CHECKING:
    from plugins.recall_hybrid.minilm import MiniLmEmbedder
    from plugins.recall_hybrid.vector_store import VectorStore

__all__ = ["DENSE_WEIGHT", "EMBED_BATCH", "FUSION_DEPTH", "MAX_TOKENS", "HybridRanker",
           "embed_text"]

#: How many of each side's best are fused.
FUSION_DEPTH = 40
#: The weight of the cosine against BM25's score scaled to the best one (tuned on the
#: LoCoMo conversations, ``bench/eval_recall.py``).
DENSE_WEIGHT = 0.5
#: Notes embedded per call during a rebuild (progress is reported after each).
EMBED_BATCH = 256
#: Tokens of a note that are embedded (the model was trained on at most 256).
MAX_TOKENS = 256


def embed_text(doc: IndexDoc) -> str:
    """What is embedded of a note: its searchable text with the title once (the core
    writes it twice into ``IndexDoc.text`` as a light BM25 field boost)."""
    text = doc.text
    if doc.title and text.startswith(doc.title + "\n" + doc.title + "\n"):
        return text[len(doc.title) + 1:]
    return text


class HybridRanker:
    """A ``PersistentRanker`` and ``TextRanker``: ``base`` (BM25) plus note vectors."""

    def __init__(self, base: Ranker, state_dir: str, *,
                 embedder: MiniLmEmbedder | None = None,
                 store: VectorStore | None = None) -> None:
        from plugins.recall_hybrid.minilm import DIMS, MODEL_ID, MiniLmEmbedder
        from plugins.recall_hybrid.vector_store import VectorStore

        self.base: Any = base
        self.embedder = embedder or MiniLmEmbedder(max_tokens=MAX_TOKENS)
        self.store = store or VectorStore(os.path.join(state_dir, "hybrid"),
                                          model_id=MODEL_ID, dims=DIMS)

    # -- keeping current ---------------------------------------------------------------

    def upsert(self, doc: IndexDoc) -> None:
        """BM25's upsert, then the note's vector (durable when it returns). Before the
        vectors' first build there is no store to add to: the build embeds every note."""
        self.base.upsert(doc)
        if not self.store.needs_rebuild():
            self.store.upsert(doc.path, self.embedder.embed_query(embed_text(doc)))

    def upsert_many(self, docs: Sequence[IndexDoc]) -> None:
        """Both sides in one call each."""
        if not docs:
            return
        many = getattr(self.base, "upsert_many", None)
        if callable(many):
            many(docs)
        else:
            for doc in docs:
                self.base.upsert(doc)
        if not self.store.needs_rebuild():
            self.store.upsert_many([d.path for d in docs],
                                   self.embedder.embed([embed_text(d) for d in docs]))

    def remove(self, path: str) -> None:
        """Forget ``path`` on both sides."""
        self.base.remove(path)
        if not self.store.needs_rebuild():
            self.store.remove(path)

    def remove_many(self, paths: Sequence[str]) -> None:
        """``remove`` for each of ``paths``."""
        many = getattr(self.base, "remove_many", None)
        if callable(many):
            many(paths)
        else:
            for path in paths:
                self.base.remove(path)
        if not self.store.needs_rebuild():
            for path in paths:
                self.store.remove(path)

    def needs_rebuild(self) -> bool:
        """True when BM25 or the vectors must be rebuilt (absent, other model, unreadable)."""
        return bool(self.base.needs_rebuild()) or self.store.needs_rebuild()

    def rebuild(self, docs: Iterable[IndexDoc],
                progress: Callable[[int], None] | None = None) -> int:
        """Rebuild BM25, then embed every note (``progress(n)`` after each batch)."""
        import numpy as np

        listed = list(docs)
        count = int(self.base.rebuild(listed))
        paths: list[str] = []
        parts = []
        for start in range(0, len(listed), EMBED_BATCH):
            batch = listed[start:start + EMBED_BATCH]
            parts.append(self.embedder.embed([embed_text(d) for d in batch]))
            paths.extend(d.path for d in batch)
            if progress is not None:
                progress(len(paths))
        matrix = np.concatenate(parts) if parts else np.zeros((0, self.store.dims), np.float32)
        self.store.rebuild(paths, matrix)
        return count

    def set_today(self, today_ordinal: int) -> None:
        """BM25's freshness day."""
        self.base.set_today(today_ordinal)

    def paths(self) -> list[str]:
        """BM25's indexed paths."""
        found: list[str] = self.base.paths()
        return found

    def key_terms_of(self, paths: Sequence[str], terms: Sequence[str]
                     ) -> dict[str, frozenset[str]]:
        """BM25's key fields (``KeyFieldRanker``); none known when it keeps none (recall
        then reads the notes)."""
        held = getattr(self.base, "key_terms_of", None)
        found: dict[str, frozenset[str]] = held(paths, terms) if callable(held) else {}
        return found

    # -- searching ---------------------------------------------------------------------

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        """BM25 alone (no query text to embed)."""
        found: list[tuple[str, float]] = self.base.search(terms, limit)
        return found

    def search_text(self, query: str, terms: Sequence[WeightedTerm],
                    limit: int) -> list[tuple[str, float]]:
        """BM25 and the query's vector, fused (module docstring)."""
        depth = max(limit, FUSION_DEPTH)
        lexical: list[tuple[str, float]] = self.base.search(terms, depth) if terms else []
        dense = self.store.search(self.embedder.embed_query(query), depth)
        fused: dict[str, float] = {}
        if lexical:
            best = lexical[0][1]
            for path, score in lexical:
                fused[path] = score / best
        for path, cosine in dense:
            if cosine > 0:
                fused[path] = fused.get(path, 0.0) + DENSE_WEIGHT * cosine
        scale = lexical[0][1] if lexical else 1.0  # back on BM25's scale (module docstring)
        ranked = sorted(fused.items(), key=lambda h: (-h[1], h[0]))
        return [(p, s * scale) for p, s in ranked[:limit] if s > 0]
