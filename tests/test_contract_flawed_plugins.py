"""The ranker and storage suites fail for plugins wrong in ways their authors easily get
wrong, and pass for correct ones: a ranker that splits ``doc.text`` itself instead of using
the factory's tokenizer, one that ignores term weights, one that ranks newest (last path)
first; a storage whose identity is random per opening, one whose ``stat().mtime`` is
frozen, one whose conditional write reads then writes. Each suite test is called directly
with the flawed object and must raise ``AssertionError``; the correct ones run as a
plugin author would subclass the suites (``ranker_factory`` only, ``StorageSpec`` and
``SimpleTokenizer`` from ``echo_core.testing``)."""

from __future__ import annotations

import math
import types
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from echo_core import testing
from echo_core.models import FileStat
from echo_core.protocols import IndexDoc, RankerFactory, Tokenizer, WeightedTerm
from echo_core.testing import (
    KeyFieldRankerContract,
    RankerContract,
    SimpleTokenizer,
    StorageContract,
    StorageSpec,
    TokenizerContract,
)
from echo_core.testing.storage_contract_conditional import ConditionalWriteContract
from plugins.recall_bm25 import bm25_factory
from plugins.storage_fs.folder_storage import FolderStorage

# --- rankers ---------------------------------------------------------------------------


class OwnSplitRanker:
    """Scores weight x idf, but indexes ``doc.text.split()``: never its tokenizer."""

    def __init__(self, tokenizer: Tokenizer, state_dir: str = "") -> None:
        self.docs: dict[str, Counter[str]] = {}

    def terms_of(self, doc: IndexDoc) -> list[str]:
        return doc.text.split()

    def upsert(self, doc: IndexDoc) -> None:
        self.docs[doc.path] = Counter(self.terms_of(doc))

    def remove(self, path: str) -> None:
        self.docs.pop(path, None)

    def weight(self, term: WeightedTerm) -> float:
        return term.weight

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        df = Counter(t for counts in self.docs.values() for t in counts)
        scores: dict[str, float] = {}
        for path, counts in self.docs.items():
            hits = [t for t in terms if counts.get(t.term)]
            if any(not t.boost_only for t in hits):
                scores[path] = sum(self.weight(t) * math.log(1 + len(self.docs) / df[t.term])
                                   for t in hits)
        return sorted(scores.items(), key=lambda kv: -kv[1])[:limit]


class LowercaseSplitRanker(OwnSplitRanker):
    """Lowercases and splits the text itself: right for plain words, wrong for any
    tokenizer that stems or normalises."""

    def terms_of(self, doc: IndexDoc) -> list[str]:
        return doc.text.lower().split()


class TokenizingRanker(OwnSplitRanker):
    """Correct: indexes through the tokenizer it is given."""

    def __init__(self, tokenizer: Tokenizer, state_dir: str = "") -> None:
        super().__init__(tokenizer, state_dir)
        self.tokenizer = tokenizer

    def terms_of(self, doc: IndexDoc) -> list[str]:
        return self.tokenizer.tokenize(doc.text)


class IgnoresWeightsRanker(TokenizingRanker):
    def weight(self, term: WeightedTerm) -> float:
        return 1.0


class NewestFirstRanker(TokenizingRanker):
    """Every document holding a plain term, the last path (or upsert) first."""

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        plain = {t.term for t in terms if not t.boost_only}
        hits = sorted((p for p, counts in self.docs.items() if plain & set(counts)),
                      reverse=True)
        return [(p, 1.0 / (i + 1)) for i, p in enumerate(hits[:limit])]


def _identity(word: str) -> str:
    return word


@pytest.mark.parametrize(
    ("flawed", "test_name", "extra"),
    [
        (OwnSplitRanker, "test_capitalised_words_are_found_by_their_lowercase_terms", {}),
        (IgnoresWeightsRanker, "test_a_heavier_weight_puts_its_document_first",
         {"heavy": "jasmine"}),
        (NewestFirstRanker, "test_document_with_rare_term_ranks_first", {}),
        (NewestFirstRanker, "test_a_heavier_weight_puts_its_document_first",
         {"heavy": "harbor"}),
        (NewestFirstRanker, "test_a_boost_only_term_raises_the_documents_it_matches",
         {"boost": "jasmine"}),
    ],
)
def test_ranker_suite_catches_flawed_rankers(
    flawed: type[OwnSplitRanker], test_name: str, extra: dict[str, Any]
) -> None:
    test = getattr(RankerContract(), test_name)
    with pytest.raises(AssertionError):
        test(ranker=flawed(SimpleTokenizer()), to_term=_identity, **extra)


@pytest.mark.parametrize("flawed", [OwnSplitRanker, LowercaseSplitRanker])
def test_ranker_suite_catches_a_ranker_ignoring_its_tokenizer(
    flawed: type[OwnSplitRanker], tmp_path: Path
) -> None:
    test = RankerContract().test_documents_are_indexed_through_the_factory_tokenizer
    with pytest.raises(AssertionError):
        test(ranker_factory=flawed, tmp_path=tmp_path)


class TestTokenizingRanker(RankerContract):
    """A third party's ranker, tested as its author would: only ``ranker_factory``."""

    @pytest.fixture
    def ranker_factory(self) -> RankerFactory:
        return TokenizingRanker


class TestBm25ByFactory(KeyFieldRankerContract):
    """The built-in ``bm25`` through its factory (the tokenizer check runs too)."""

    @pytest.fixture
    def ranker_factory(self) -> Callable[[Tokenizer, str], Any]:
        return bm25_factory


class TestSimpleTokenizer(TokenizerContract):
    @pytest.fixture
    def tokenizer(self) -> SimpleTokenizer:
        return SimpleTokenizer()


def test_plugin_authors_import_every_helper_from_echo_core_testing() -> None:
    from echo_core.testing.storage_contract import StorageSpec as Defined

    assert StorageSpec is Defined
    assert {"StorageSpec", "SimpleTokenizer"} <= set(testing.__all__)
    assert SimpleTokenizer().tokenize("Falcon, HARBOR! über_alles 42") == [
        "falcon", "harbor", "über", "alles", "42"]


@pytest.mark.parametrize("module", ["ranker_contract", "storage_contract"])
def test_suite_examples_use_no_built_in_plugin(module: str) -> None:
    """What an author copies from a suite's docstring imports only ``echo_core``."""
    doc = getattr(__import__(f"echo_core.testing.{module}", fromlist=["_"]), "__doc__", "")
    for built_in in ("plugins.", "PorterLite", "Bm25", "FolderStorage"):
        assert built_in not in doc, built_in


# --- storages --------------------------------------------------------------------------


class RandomIdentityStorage(FolderStorage):
    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.identity = f"file:{uuid.uuid4()}"


class FrozenMtimeStorage(FolderStorage):
    def stat(self, path: str) -> FileStat:
        found = super().stat(path)
        return FileStat(path=found.path, size=found.size, mtime=1.0)


class RacyConditionalStorage(FolderStorage):
    """Reads, compares, then writes: nothing atomic (no sleep in between)."""

    def write_unless_changed(self, path: str, text: str, expected: str | None) -> bool:
        current = self.read_many([path])[path]
        if current != expected:
            return False
        self.write(path, text)
        return True


def test_storage_suite_catches_a_random_identity(tmp_path: Path) -> None:
    spec = StorageSpec(f"{__file__}:RandomIdentityStorage", (str(tmp_path),))
    request = cast(pytest.FixtureRequest, types.SimpleNamespace(getfixturevalue=lambda _: spec))
    test = StorageContract().test_identity_is_the_same_for_every_opening_of_the_vault
    with pytest.raises(AssertionError, match="different identities"):
        test(request=request, storage=RandomIdentityStorage(str(tmp_path)))


def test_storage_suite_catches_a_frozen_mtime(tmp_path: Path) -> None:
    test = StorageContract().test_stat_mtime_is_the_time_of_the_last_write
    with pytest.raises(AssertionError, match="not about now"):
        test(storage=FrozenMtimeStorage(str(tmp_path)))


def test_storage_suite_catches_a_racy_conditional_write(tmp_path: Path) -> None:
    test = ConditionalWriteContract(
    ).test_of_concurrent_conditional_writes_from_one_text_exactly_one_lands
    with pytest.raises(AssertionError, match="not exactly one"):
        test(storage=RacyConditionalStorage(str(tmp_path)))

