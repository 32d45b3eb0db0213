"""``RankerContract``: the behaviour every ``Ranker`` (search index) must show.

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the ``ranker`` fixture::

    from echo_core.testing import RankerContract

    class TestBm25Ranker(RankerContract):
        @pytest.fixture
        def ranker(self, tmp_path):
            return Bm25RankerFactory(PorterLiteTokenizer(), str(tmp_path))

Query terms are handed to ``search`` as the ranker's tokenizer would produce them. The
suite uses plain words most tokenizers keep unchanged (``falcon``, ``cobalt``, ...); if
yours rewrites them, override ``to_term`` (e.g. ``lambda w: tok.tokenize(w)[0]``).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

import pytest

from echo_core.protocols import IndexDoc, KeyFieldRanker, Ranker, WeightedTerm

#: (path, title, text): every document mentions ``falcon`` once, except the ``cobalt`` one.
CORPUS: tuple[tuple[str, str, str], ...] = (
    ("notes/alpha.md", "Alpha", "falcon tundra violin quartz"),
    ("notes/bravo.md", "Bravo", "falcon harbor violin quartz"),
    ("notes/charlie.md", "Charlie", "falcon tundra jasmine quartz"),
    ("notes/delta.md", "Delta", "falcon tundra violin jasmine"),
    ("notes/foxtrot.md", "Foxtrot", "falcon quartz violin jasmine"),
    ("notes/golf.md", "Golf", "falcon tundra quartz jasmine"),
    ("notes/rare.md", "Kilo", "cobalt tundra violin quartz"),
)
FALCON_PATHS = {path for path, _, text in CORPUS if "falcon" in text.split()}
RARE_PATH = "notes/rare.md"
HARBOR_PATH = "notes/bravo.md"


class RankerContract:
    """Contract tests for ``echo_core.protocols.Ranker``.

    Fixtures to override:

    * ``ranker`` -> a fresh, empty ``Ranker`` for each test (e.g. with state in
      ``tmp_path``). Required.
    * ``to_term`` -> ``word -> query term`` as your tokenizer would spell it. Optional;
      identity by default.

    Checks: a rare query term outranks a common one; ``limit`` is honoured; scores are
    strictly positive and non-increasing; ``remove`` and re-``upsert`` take effect; unknown
    or no terms give ``[]``; an extra weighted term raises a matching document's score; a
    ``boost_only`` term never brings in a document on its own.
    """

    @pytest.fixture
    def ranker(self) -> Ranker:
        raise NotImplementedError("override the `ranker` fixture to build a fresh, empty ranker")

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
    def paths(results: list[tuple[str, float]]) -> list[str]:
        """The paths of ``search`` results, in order."""
        return [path for path, _ in results]

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
