"""``protocols.offers``: the optional-protocol check recall makes per search and per hit
answers exactly as ``isinstance`` does, class by class."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from echo_core.protocols import KeyFieldRanker, TermFinder, TextRanker, WeightedTerm, offers
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer


class PlainTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return text.lower().split()


class FindingTokenizer(PlainTokenizer):
    def terms_among(self, text: str, wanted: AbstractSet[str]) -> set[str]:
        return set(wanted) & set(self.tokenize(text))


class KeyedRanker:
    def key_terms_of(self, paths: Sequence[str], terms: Sequence[str]
                     ) -> dict[str, frozenset[str]]:
        return {}


class PlainRanker:
    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        return []


def test_offers_answers_as_isinstance_for_each_class_and_protocol() -> None:
    objects = [PlainTokenizer(), FindingTokenizer(), PorterLiteTokenizer(), KeyedRanker(),
               PlainRanker(), object()]
    for _ in range(2):  # the second round answers from the per-class memo
        for obj in objects:
            for protocol in (TermFinder, KeyFieldRanker, TextRanker):
                assert offers(obj, protocol) is isinstance(obj, protocol), (obj, protocol)
    assert offers(FindingTokenizer(), TermFinder) and not offers(PlainTokenizer(), TermFinder)
    assert offers(PorterLiteTokenizer(), TermFinder)
    assert offers(KeyedRanker(), KeyFieldRanker) and not offers(PlainRanker(), KeyFieldRanker)
