"""``HybridRanker``: BM25 fused with MiniLM sentence vectors (config ``recall = "hybrid"``).

It wraps the ``bm25`` ranker the core hands it (the factory ``wraps = "bm25"``; the same
index plain ``bm25`` keeps, under ``<state_dir>/bm25``) and keeps two vectors per note,
each in a ``VectorStore``: the note's searchable text (``embed_text``, under
``<state_dir>/hybrid``) and its lead, the title and first paragraph (``lead_text``, under
``<state_dir>/hybrid-lead``), so a note whose own point is diluted by the rest of it (a
dialog turn under its context lines, a long note's opening statement) is still found on
that point. The core keeps all three current: every ``upsert`` / ``remove`` goes to each,
and ``needs_rebuild`` is True when any must be rebuilt, so the vectors are built (with
progress) by ``reindex`` or the first recall. The text side is always written last and
is the one that says which notes have vectors: a lead vector counts only for a note the
text side holds, so a write killed between the two sides never brings back a note the
text side no longer has.

``search_text(query, terms, limit)`` (recall calls it: ``echo_core.TextRanker``) takes the
best ``FUSION_DEPTH`` of BM25 and of the text vectors and fuses their scores: ``bm25 /
best bm25 + DENSE_WEIGHT x z``. ``z`` is a note's cosine standardised by the query's
cosines over every note of that side, ``(cosine - mean) / standard deviation``
(``VectorStore.cosine_stats``: exact, from moments kept with the vectors), the larger of
its two (text and lead), times the note's prior as BM25 scores it (``priors_of``: the
status, corpus and question weights and freshness), so a superseded note or a turn that
only asks is lifted on meaning no more than BM25 would weigh it; a ``z`` under 0 adds
nothing. The lead vectors only re-score
those candidates: searching them too found no other note that reached a top 10 on LoCoMo
(the same figures to the third decimal), and it would cost a second search (~3 ms at
100k notes). Standardising puts the dense side on a per-query
scale, as ``/ best`` does BM25: raw MiniLM cosines crowd into a narrow band that moves
from query to query, so a fixed weight on them either barely reorders BM25 or swamps it.
A side of fewer than ``MIN_STATS_NOTES`` notes is too small to standardise: its raw
cosine counts, times ``RAW_WEIGHT``. BM25's priors still order what both sides find, and a
note that shares no word with the query can still come in on meaning. The fused scores
are multiplied back by the best BM25 score, so they stay on BM25's scale (the prompt
hook's absolute floor keeps its meaning: a note found on meaning alone scores ``DENSE_WEIGHT
x z x best``). ``search(terms, limit)`` (no query text) is BM25's answer.

A query that names an entity (an expansion's ``WeightedTerm.names``: the alias expander
sets it to the entity's note when the query holds one of its names whole) is about it,
so the dense side treats that note as the subject, not the answer: it gets no dense lift
(the vector of any question naming a thing is close to the thing's own note, whatever
the question asks of it), and meaning alone brings in no note, so the vector search is
skipped and only what BM25 found is re-scored. The named note's place comes from BM25
and the key-field boost, as with ``bm25``. An entity the query names by every name it
has brings no expansion, so this rule does not see it.

On the LoCoMo conversations (``bench/eval_recall.py``, layout ``turn+context``) the
standardised fusion with lead vectors lifted hybrid R@5 / R@10 0.733 / 0.807 -> 0.737 /
0.815, multi-hop R@5 0.353 -> 0.393 and open-domain 0.381 -> 0.398 (single-hop 0.844 ->
0.840, temporal 0.882 -> 0.869); ``DENSE_WEIGHT`` was chosen leave-one-conversation-out
(every fold picks 0.3). Neither part alone reached multi-hop 0.39: standardised cosines
of the whole text 0.374, raw cosines with lead vectors 0.358. On the gold set
(``bench/eval_gold.py``, a vault of people, companies and projects) that fusion alone
fell from R@5 / MRR 0.967 / 1.00 to 0.933 / 0.90: an entity's own note passed the
specific note BM25 ranks first (three queries from #1 to #2), and notes of the same kind
found on meaning alone (other people's notes for "What does Maggie lead?") pushed notes
that name the entity out of the top 5 (two queries). The subject rule above brings it
to 1.00 / 1.00 and leaves LoCoMo unchanged: its notes name no entity.

Weighing the dense lift by the note's prior (the same run, LoCoMo turn+context, 760
questions; its priors there are the question weight alone): R@5 / R@10 0.743 / 0.821 ->
0.749 / 0.820, multi-hop R@5 0.382 -> 0.394, open-domain 0.409 both, single-hop 0.847 ->
0.856; the gold set stays at 1.00 / 1.00. ``priors_of`` costs 0.39 ms p50 for 80 paths
of a 100k-note index (one SQL query for the delta, a binary search each in the base).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from echo_core import IndexDoc, Ranker, WeightedTerm

if TYPE_CHECKING:
    from plugins.recall_hybrid.minilm import MiniLmEmbedder
    from plugins.recall_hybrid.vector_store import VectorStore

__all__ = ["DENSE_WEIGHT", "EMBED_BATCH", "FUSION_DEPTH", "LEAD_SUFFIX", "MAX_TOKENS",
           "MIN_STATS_NOTES", "RAW_WEIGHT", "HybridRanker", "embed_text", "lead_text"]

#: How many of each side's best are fused.
FUSION_DEPTH = 40
#: The weight of one standard deviation of cosine against BM25's score scaled to the
#: best one (chosen on the LoCoMo conversations, ``bench/eval_recall.py``).
DENSE_WEIGHT = 0.3
#: A vector side of fewer notes counts raw cosines, times ``RAW_WEIGHT`` (the fusion of
#: before the standardisation, tuned the same way).
MIN_STATS_NOTES = 8
RAW_WEIGHT = 0.5
#: Notes embedded per call during a rebuild (progress is reported after each).
EMBED_BATCH = 256
#: Tokens of a note that are embedded (the model was trained on at most 256).
MAX_TOKENS = 256
#: Words of the first paragraph a lead keeps: its point, at a fraction of a full text's
#: embedding cost.
LEAD_WORDS = 48
#: The lead vectors' model id is the model's plus this (another text: other vectors; a
#: lead of another length: other vectors again).
LEAD_SUFFIX = f"#lead{LEAD_WORDS}"


def embed_text(doc: IndexDoc) -> str:
    """What is embedded of a note: its searchable text with the title once (the core
    writes it twice into ``IndexDoc.text`` as a light BM25 field boost)."""
    text = doc.text
    if doc.title and text.startswith(doc.title + "\n" + doc.title + "\n"):
        return text[len(doc.title) + 1:]
    return text


def lead_text(doc: IndexDoc) -> str:
    """A note's lead: its title and the first paragraph of its body that is not a
    heading, cut to ``LEAD_WORDS`` words (the title alone when there is none). The body
    is ``IndexDoc.text`` after the core's title, title and aliases-and-tags lines when it
    starts with them."""
    text, title = doc.text, doc.title
    doubled = f"{title}\n{title}\n"
    body = text.removeprefix(doubled).partition("\n")[2] if title and text.startswith(doubled) \
        else text
    paragraph: list[str] = []
    for line in body.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line == "---":
            if paragraph:
                break
            continue
        paragraph.append(line)
    lead = " ".join(" ".join(paragraph).split()[:LEAD_WORDS])
    return f"{title}\n{lead}" if title and lead else (title or lead)


class HybridRanker:
    """A ``PersistentRanker`` and ``TextRanker``: ``base`` (BM25) plus note vectors."""

    def __init__(self, base: Ranker, state_dir: str, *,
                 embedder: MiniLmEmbedder | None = None,
                 store: VectorStore | None = None,
                 lead_store: VectorStore | None = None) -> None:
        from plugins.recall_hybrid.minilm import DIMS, MODEL_ID, MiniLmEmbedder
        from plugins.recall_hybrid.vector_store import VectorStore

        self.base: Any = base
        self.embedder = embedder or MiniLmEmbedder(max_tokens=MAX_TOKENS)
        self.store = store or VectorStore(os.path.join(state_dir, "hybrid"),
                                          model_id=MODEL_ID, dims=DIMS)
        self.lead_store = lead_store or VectorStore(
            os.path.join(state_dir, "hybrid-lead"), model_id=MODEL_ID + LEAD_SUFFIX, dims=DIMS)
        self._stores = (self.store, self.lead_store)

    # -- keeping current ---------------------------------------------------------------

    def upsert(self, doc: IndexDoc) -> None:
        """BM25's upsert, then the note's two vectors (durable when it returns). Before
        the vectors' first build there is no store to add to: the build embeds every
        note."""
        self.upsert_many([doc])

    def upsert_many(self, docs: Sequence[IndexDoc]) -> None:
        """Each side in one call: BM25's, then the notes' texts and leads embedded in one
        batch."""
        if not docs:
            return
        many = getattr(self.base, "upsert_many", None)
        if callable(many):
            many(docs)
        else:
            for doc in docs:
                self.base.upsert(doc)
        if not self._vectors_need_rebuild():
            paths = [d.path for d in docs]
            vectors = self._embed_both(docs)
            self.lead_store.upsert_many(paths, vectors[len(docs):])
            self.store.upsert_many(paths, vectors[:len(docs)])  # last (``search_text``)

    def _embed_both(self, docs: Sequence[IndexDoc]) -> Any:
        """The vectors of the docs' texts, then of their leads, in one batch."""
        return self.embedder.embed([*map(embed_text, docs), *map(lead_text, docs)])

    def remove(self, path: str) -> None:
        """Forget ``path`` on every side."""
        self.remove_many([path])

    def remove_many(self, paths: Sequence[str]) -> None:
        """``remove`` for each of ``paths``."""
        many = getattr(self.base, "remove_many", None)
        if callable(many):
            many(paths)
        else:
            for path in paths:
                self.base.remove(path)
        if not self._vectors_need_rebuild():
            for store in (self.lead_store, self.store):  # the text side last
                for path in paths:
                    store.remove(path)

    def _vectors_need_rebuild(self) -> bool:
        return any(store.needs_rebuild() for store in self._stores)

    def needs_rebuild(self) -> bool:
        """True when BM25 or either vector side must be rebuilt (absent, other model,
        unreadable)."""
        return bool(self.base.needs_rebuild()) or self._vectors_need_rebuild()

    def rebuild(self, docs: Iterable[IndexDoc],
                progress: Callable[[int], None] | None = None) -> int:
        """Rebuild BM25, then embed every note and its lead (``progress(n)`` after each
        batch). When only the lead side is missing and the text side holds exactly
        these notes (a store made before lead vectors, or one whose lead files were
        lost), the text vectors are kept and only the leads embedded: a fraction of a
        full build."""
        import numpy as np

        listed = list(docs)
        keep_texts = self._only_leads_missing([d.path for d in listed])
        count = int(self.base.rebuild(listed))
        paths: list[str] = []
        texts, leads = [], []
        for start in range(0, len(listed), EMBED_BATCH):
            batch = listed[start:start + EMBED_BATCH]
            if keep_texts:
                leads.append(self.embedder.embed([lead_text(d) for d in batch]))
            else:
                vectors = self._embed_both(batch)
                texts.append(vectors[:len(batch)])
                leads.append(vectors[len(batch):])
            paths.extend(d.path for d in batch)
            if progress is not None:
                progress(len(paths))
        empty = np.zeros((0, self.store.dims), np.float32)
        self.lead_store.rebuild(paths, np.concatenate(leads) if leads else empty)
        if not keep_texts:
            self.store.rebuild(paths, np.concatenate(texts) if texts else empty)  # last
        return count

    def _only_leads_missing(self, paths: Sequence[str]) -> bool:
        return (self.lead_store.needs_rebuild() and not self.store.needs_rebuild()
                and sorted(self.store.paths()) == sorted(paths))

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

    def _priors_of(self, paths: Sequence[str]) -> dict[str, float]:
        """BM25's prior of each of ``paths`` (its ``priors_of``; none known when the base
        ranker keeps none: every lift then counts whole)."""
        held = getattr(self.base, "priors_of", None)
        found: dict[str, float] = held(paths) if callable(held) and paths else {}
        return found

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        """BM25 alone (no query text to embed)."""
        found: list[tuple[str, float]] = self.base.search(terms, limit)
        return found

    def search_text(self, query: str, terms: Sequence[WeightedTerm],
                    limit: int) -> list[tuple[str, float]]:
        """BM25 and the query's vectors, fused (module docstring)."""
        depth = max(limit, FUSION_DEPTH)
        lexical: list[tuple[str, float]] = self.base.search(terms, depth) if terms else []
        vector = self.embedder.embed_query(query)
        fused: dict[str, float] = {}
        if lexical:
            best = lexical[0][1]
            for path, score in lexical:
                fused[path] = score / best
        subject = {t.names for t in terms if t.names}  # notes the query names (docstring)
        found = self.store.search(vector, depth) if not subject else []
        held = list(dict.fromkeys([*fused, *(p for p, _ in found)]))
        dense: dict[str, float] = {}
        for store in self._stores:  # the text side first: it says which notes count
            worth = _dense_score(store.cosine_stats(vector))
            cosines = store.cosines_of(vector, held)
            held = list(cosines)
            for path, cosine in cosines.items():
                dense[path] = max(dense.get(path, 0.0), worth(cosine))
        priors = self._priors_of([p for p, score in dense.items() if score > 0])
        for path, score in dense.items():
            if score > 0 and path not in subject:
                fused[path] = fused.get(path, 0.0) + score * priors.get(path, 1.0)
        scale = lexical[0][1] if lexical else 1.0  # back on BM25's scale (module docstring)
        ranked = sorted(fused.items(), key=lambda h: (-h[1], h[0]))
        return [(p, s * scale) for p, s in ranked[:limit] if s > 0]


def _dense_score(stats: tuple[float, float, int]) -> Callable[[float], float]:
    """What a cosine adds to a fused score, given the query's cosine statistics over
    the side's notes (module docstring)."""
    mean, std, count = stats
    if count >= MIN_STATS_NOTES and std > 0:
        return lambda cosine: DENSE_WEIGHT * (cosine - mean) / std
    return lambda cosine: RAW_WEIGHT * cosine
