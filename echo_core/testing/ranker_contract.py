"""``RankerContract``: the behaviour every ``Ranker`` (search index) must show.

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the ``ranker_factory`` fixture (your ``RankerFactory``; the suite builds each ranker with
``SimpleTokenizer`` and one with a tokenizer of its own)::

    from echo_core.testing import RankerContract

    class TestMyRanker(RankerContract):
        @pytest.fixture
        def ranker_factory(self):
            return MyRanker        # called as MyRanker(tokenizer, state_dir)

A ranker that needs more than its factory to be ready may override ``ranker`` instead
(or as well), building it with ``SimpleTokenizer()`` from ``echo_core.testing``.

Query terms are handed to ``search`` as the ranker's tokenizer would produce them. The
suite uses plain lowercase words ``SimpleTokenizer`` keeps unchanged (``falcon``,
``cobalt``, ...); if your ``ranker`` fixture uses a tokenizer that rewrites them,
override ``to_term`` (e.g. ``lambda w: tok.tokenize(w)[0]``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path

import pytest

from echo_core.protocols import (
    IndexDoc,
    KeyFieldRanker,
    PersistentRanker,
    Ranker,
    RankerFactory,
    Tokenizer,
    WeightedTerm,
)
from echo_core.testing.simple_tokenizer import SimpleTokenizer, TaggingTokenizer

#: (path, title, text): every document mentions ``falcon`` once, except the ``cobalt`` one,
#: which sits in the middle both by path and by upsert order (so no order of paths or of
#: upserts puts it first).
CORPUS: tuple[tuple[str, str, str], ...] = (
    ("notes/alpha.md", "Alpha", "falcon tundra violin quartz"),
    ("notes/bravo.md", "Bravo", "falcon harbor violin quartz"),
    ("notes/charlie.md", "Charlie", "falcon tundra jasmine quartz"),
    ("notes/cobalt.md", "Kilo", "cobalt tundra violin quartz"),
    ("notes/delta.md", "Delta", "falcon tundra violin jasmine"),
    ("notes/foxtrot.md", "Foxtrot", "falcon quartz violin jasmine"),
    ("notes/golf.md", "Golf", "falcon tundra quartz jasmine"),
)
FALCON_PATHS = {path for path, _, text in CORPUS if "falcon" in text.split()}
RARE_PATH = "notes/cobalt.md"
HARBOR_PATH = "notes/bravo.md"

#: Two documents alike but for one word each (``harbor`` / ``jasmine``, each held by no
#: other document), and one holding neither: how much each word weighs decides their order.
PAIR: tuple[tuple[str, str, str], ...] = (
    ("notes/pair-1.md", "One", "falcon harbor quartz"),
    ("notes/pair-2.md", "Two", "falcon jasmine quartz"),
    ("notes/pair-3.md", "Three", "falcon tundra quartz"),
)
PAIR_BY_WORD = {"harbor": "notes/pair-1.md", "jasmine": "notes/pair-2.md"}


class RankerContract:
    """Contract tests for ``echo_core.protocols.Ranker``.

    Fixtures to override:

    * ``ranker_factory`` -> your ``RankerFactory`` (``factory(tokenizer, state_dir)``;
      a persistent ranker is rebuilt from no documents when it says it needs it, as the
      core does). Required unless you override ``ranker``; without it the check that the
      ranker indexes through the tokenizer it is given is skipped.
    * ``ranker`` -> a fresh, empty ``Ranker`` for each test. Optional: by default
      ``ranker_factory(SimpleTokenizer(), <tmp folder>)``.
    * ``to_term`` -> ``word -> query term`` as your ``ranker``'s tokenizer would spell it.
      Optional; identity by default.

    The ranking policy every ranker must follow (the rest is its own):

    * a document is found by the terms the ranker's tokenizer makes of its text, and only
      by them (query terms come tokenized; they are not tokenized again). Tokenizers
      lowercase, so a word written in capitals is found by its lowercase term;
    * among documents of equal priors (``IndexDoc.weight``, ``updated``: the suite leaves
      both at their defaults), the score grows with each matched term's weight and with
      its rarity: the only document holding a rare term outranks those holding only a
      term every document holds, and of two documents alike but for one term each, the
      one holding the more heavily weighted term ranks first;
    * the order never follows paths or the order of upserts (the suite puts the expected
      winner between the others by both, and swaps winners by weight);
    * ``boost_only`` terms add score only to documents a plain term matched: they raise
      those and never bring a document in.

    Also: ``limit`` is honoured; scores are strictly positive and non-increasing;
    ``remove`` and re-``upsert`` take effect; unknown or no terms give ``[]``.
    """

    @pytest.fixture
    def ranker_factory(self) -> RankerFactory | None:
        return None

    @pytest.fixture
    def ranker(self, ranker_factory: RankerFactory | None, tmp_path: Path) -> Ranker:
        if ranker_factory is None:
            raise NotImplementedError(
                "override the `ranker_factory` fixture (or `ranker`, a fresh empty ranker)")
        return self.build_ranker(ranker_factory, SimpleTokenizer(), tmp_path / "ranker")

    @pytest.fixture
    def to_term(self) -> Callable[[str], str]:
        return lambda word: word

    # --- helpers ----------------------------------------------------------------------

    @staticmethod
    def load_corpus(ranker: Ranker) -> None:
        """Upsert every document of ``CORPUS``."""
        for path, title, text in CORPUS:
            ranker.upsert(IndexDoc(path=path, title=title, text=text))

    @staticmethod
    def load_docs(ranker: Ranker, docs: Sequence[tuple[str, str, str]]) -> None:
        """Upsert ``(path, title, text)`` documents, in order."""
        for path, title, text in docs:
            ranker.upsert(IndexDoc(path=path, title=title, text=text))

    @staticmethod
    def paths(results: list[tuple[str, float]]) -> list[str]:
        """The paths of ``search`` results, in order."""
        return [path for path, _ in results]

    @staticmethod
    def build_ranker(factory: RankerFactory, tokenizer: Tokenizer, state_dir: Path) -> Ranker:
        """``factory(tokenizer, state_dir)`` made ready as the core makes it: a
        ``PersistentRanker`` that needs a rebuild is rebuilt from no documents."""
        state_dir.mkdir(parents=True, exist_ok=True)
        made = factory(tokenizer, str(state_dir))
        if isinstance(made, PersistentRanker) and made.needs_rebuild():
            made.rebuild([])
        return made

    # --- tests ------------------------------------------------------------------------

    def test_implements_ranker_protocol(self, ranker: Ranker) -> None:
        assert isinstance(ranker, Ranker)

    def test_empty_ranker_finds_nothing(
        self, ranker: Ranker, to_term: Callable[[str], str]
    ) -> None:
        assert ranker.search([WeightedTerm(to_term("falcon"))], 10) == []

    def test_document_with_rare_term_ranks_first(
        self, ranker: Ranker, to_term: Callable[[str], str]
    ) -> None:
        """Rarity, not path or upsert order: the ``cobalt`` document is fourth of seven
        by both, so a ranker ordering by either (newest first, say) puts another first."""
        self.load_corpus(ranker)
        terms = [WeightedTerm(to_term("falcon")), WeightedTerm(to_term("cobalt"))]
        results = ranker.search(terms, 10)
        assert results, "a query of indexed terms must find documents"
        assert results[0][0] == RARE_PATH, (
            f"the only document with the rare term should rank first, got {self.paths(results)}"
        )
        assert set(self.paths(results)) == FALCON_PATHS | {RARE_PATH}

    @pytest.mark.parametrize("limit", [1, 3])
    def test_limit_is_honoured(
        self, ranker: Ranker, to_term: Callable[[str], str], limit: int
    ) -> None:
        self.load_corpus(ranker)
        results = ranker.search([WeightedTerm(to_term("falcon"))], limit)
        assert len(results) == limit, f"limit {limit} gave {len(results)} results"

    def test_results_are_unique_with_positive_non_increasing_scores(
        self, ranker: Ranker, to_term: Callable[[str], str]
    ) -> None:
        self.load_corpus(ranker)
        terms = [WeightedTerm(to_term(w)) for w in ("falcon", "cobalt", "harbor", "jasmine")]
        results = ranker.search(terms, 100)
        paths = self.paths(results)
        assert len(paths) == len(set(paths)), f"duplicate paths in {paths}"
        scores = [score for _, score in results]
        assert all(isinstance(s, (int, float)) and s > 0 for s in scores), scores
        assert all(a >= b for a, b in pairwise(scores)), f"not sorted: {scores}"

    def test_removed_document_disappears(
        self, ranker: Ranker, to_term: Callable[[str], str]
    ) -> None:
        self.load_corpus(ranker)
        ranker.remove(RARE_PATH)
        ranker.remove("notes/never-indexed.md")  # unknown path: a no-op
        gone = ranker.search([WeightedTerm(to_term("cobalt"))], 10)
        assert gone == [], f"a removed document is still found: {gone}"
        found = self.paths(ranker.search([WeightedTerm(to_term("tundra"))], 100))
        assert found and RARE_PATH not in found, f"after remove, 'tundra' found {found}"

    def test_upsert_of_same_path_replaces_the_document(
        self, ranker: Ranker, to_term: Callable[[str], str]
    ) -> None:
        self.load_corpus(ranker)
        ranker.upsert(IndexDoc(path=RARE_PATH, title="Kilo", text="marigold tundra"))
        old = self.paths(ranker.search([WeightedTerm(to_term("cobalt"))], 10))
        assert RARE_PATH not in old, "a term only in the replaced version still matches"
        found = self.paths(ranker.search([WeightedTerm(to_term("marigold"))], 10))
        assert found == [RARE_PATH], f"the new version is not searchable: {found}"
        tundra = self.paths(ranker.search([WeightedTerm(to_term("tundra"))], 100))
        assert tundra.count(RARE_PATH) == 1, f"the path must appear once: {tundra}"

    def test_unknown_term_finds_nothing(
        self, ranker: Ranker, to_term: Callable[[str], str]
    ) -> None:
        self.load_corpus(ranker)
        assert ranker.search([WeightedTerm(to_term("xylophone"))], 10) == []

    def test_no_terms_find_nothing(self, ranker: Ranker) -> None:
        self.load_corpus(ranker)
        assert ranker.search([], 10) == []

    def test_extra_weighted_term_raises_a_matching_score(
        self, ranker: Ranker, to_term: Callable[[str], str]
    ) -> None:
        self.load_corpus(ranker)
        plain = dict(ranker.search([WeightedTerm(to_term("falcon"))], 100))
        extra = [WeightedTerm(to_term("falcon")), WeightedTerm(to_term("harbor"), 0.5)]
        boosted = dict(ranker.search(extra, 100))
        assert boosted[HARBOR_PATH] > plain[HARBOR_PATH], (
            f"a 0.5-weighted matching term must raise the score: "
            f"{plain[HARBOR_PATH]} -> {boosted[HARBOR_PATH]}"
        )

    @pytest.mark.parametrize("heavy", sorted(PAIR_BY_WORD))
    def test_a_heavier_weight_puts_its_document_first(
        self, ranker: Ranker, to_term: Callable[[str], str], heavy: str
    ) -> None:
        """Two documents alike but for ``harbor`` / ``jasmine``: the one whose word weighs
        1.0 outranks the one whose word weighs 0.25 (and the winner swaps with the
        weights, so neither path order nor upsert order can pass both cases)."""
        self.load_docs(ranker, PAIR)
        light = next(word for word in PAIR_BY_WORD if word != heavy)
        terms = [WeightedTerm(to_term("falcon")), WeightedTerm(to_term(heavy), 1.0),
                 WeightedTerm(to_term(light), 0.25)]
        found = self.paths(ranker.search(terms, 10))
        assert found[:2] == [PAIR_BY_WORD[heavy], PAIR_BY_WORD[light]], (
            f"{heavy!r} weighs 1.0 and {light!r} 0.25, yet the order is {found}")

    @pytest.mark.parametrize("boost", sorted(PAIR_BY_WORD))
    def test_a_boost_only_term_raises_the_documents_it_matches(
        self, ranker: Ranker, to_term: Callable[[str], str], boost: str
    ) -> None:
        """``falcon`` finds all three ``PAIR`` documents alike; a ``boost_only`` term
        held by one of them puts that one first (whichever it is)."""
        self.load_docs(ranker, PAIR)
        terms = [WeightedTerm(to_term("falcon")), WeightedTerm(to_term(boost), 0.5, True)]
        found = self.paths(ranker.search(terms, 10))
        assert sorted(found) == [path for path, _, _ in PAIR], found
        assert found[0] == PAIR_BY_WORD[boost], (
            f"the boost-only term {boost!r} did not raise its document: {found}")

    def test_capitalised_words_are_found_by_their_lowercase_terms(
        self, ranker: Ranker, to_term: Callable[[str], str]
    ) -> None:
        """Tokenizers lowercase (``Tokenizer.tokenize``): a ranker that indexes through its
        tokenizer finds ``FALCON`` by ``falcon``; one splitting ``doc.text`` itself does not."""
        ranker.upsert(IndexDoc(path="notes/loud.md", title="Loud",
                               text="FALCON Harbor MariGold"))
        ranker.upsert(IndexDoc(path="notes/quiet.md", title="Quiet", text="tundra violin"))
        for word in ("falcon", "harbor", "marigold"):
            found = self.paths(ranker.search([WeightedTerm(to_term(word))], 10))
            assert found == ["notes/loud.md"], (
                f"{word!r} should find the note holding {word.upper()!r}-like words: {found}")

    def test_documents_are_indexed_through_the_factory_tokenizer(
        self, ranker_factory: RankerFactory | None, tmp_path: Path
    ) -> None:
        """Built with ``TaggingTokenizer`` (terms like ``tagfalcon``, no word of the text),
        the ranker finds documents by those terms and not by the raw words: it indexes
        through the tokenizer the core gives it (the vault's, e.g. a stemmer)."""
        if ranker_factory is None:
            pytest.skip("override `ranker_factory` to check the ranker uses its tokenizer")
        tagged = TaggingTokenizer()
        ranker = self.build_ranker(ranker_factory, tagged, tmp_path / "tagged")
        self.load_docs(ranker, CORPUS)
        (cobalt,) = tagged.tokenize("Cobalt")
        found = self.paths(ranker.search([WeightedTerm(cobalt)], 10))
        assert found == [RARE_PATH], f"the tokenizer's term {cobalt!r} found {found}"
        falcon = self.paths(ranker.search(
            [WeightedTerm(t) for t in tagged.tokenize("FALCON")], 100))
        assert set(falcon) == FALCON_PATHS, falcon
        raw = ranker.search([WeightedTerm("cobalt"), WeightedTerm("falcon")], 10)
        assert raw == [], f"raw words are no terms of this tokenizer, yet found {raw}"

    def test_boost_only_terms_never_bring_in_documents(
        self, ranker: Ranker, to_term: Callable[[str], str]
    ) -> None:
        self.load_corpus(ranker)
        boost = WeightedTerm(to_term("cobalt"), 0.5, boost_only=True)
        found = self.paths(ranker.search([WeightedTerm(to_term("falcon")), boost], 100))
        assert RARE_PATH not in found, "a boost-only term matched a document on its own"
        assert set(found) == FALCON_PATHS
        assert ranker.search([boost], 10) == []


class KeyFieldRankerContract(RankerContract):
    """``RankerContract`` plus the checks of ``echo_core.protocols.KeyFieldRanker`` (a
    ranker that keeps each document's title and alias terms for recall's key-field
    boost). Same fixtures.

    Checks: ``key_terms_of`` names exactly the asked terms a document's title or aliases
    hold, leaves out paths it does not hold, and follows ``upsert`` and ``remove``.
    """

    def test_implements_key_field_ranker_protocol(self, ranker: Ranker) -> None:
        assert isinstance(ranker, KeyFieldRanker)

    def test_key_terms_are_the_asked_terms_of_title_and_aliases(
        self, ranker: Ranker, to_term: Callable[[str], str]
    ) -> None:
        assert isinstance(ranker, KeyFieldRanker)
        self.load_corpus(ranker)
        ranker.upsert(IndexDoc(path=HARBOR_PATH, title="Harbor Lantern",
                               text="Harbor Lantern\nmarigold violin", aliases="Ferry Co"))
        asked = [to_term(w) for w in ("harbor", "ferry", "violin", "marigold", "cobalt")]
        held = ranker.key_terms_of([HARBOR_PATH, "notes/never-indexed.md"], asked)
        assert held == {HARBOR_PATH: frozenset({to_term("harbor"), to_term("ferry")})}, held

    def test_key_terms_follow_upsert_and_remove(
        self, ranker: Ranker, to_term: Callable[[str], str]
    ) -> None:
        assert isinstance(ranker, KeyFieldRanker)
        self.load_corpus(ranker)
        asked = [to_term(w) for w in ("kilo", "marigold")]
        assert ranker.key_terms_of([RARE_PATH], asked) == {
            RARE_PATH: frozenset({to_term("kilo")})}
        ranker.upsert(IndexDoc(path=RARE_PATH, title="Marigold", text="Marigold tundra"))
        assert ranker.key_terms_of([RARE_PATH], asked) == {
            RARE_PATH: frozenset({to_term("marigold")})}
        ranker.remove(RARE_PATH)
        assert ranker.key_terms_of([RARE_PATH], asked) == {}
