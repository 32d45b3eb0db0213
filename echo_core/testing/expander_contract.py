"""``ExpanderContract``: the behaviour every query ``Expander`` must show.

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the fixtures::

    from echo_core.testing import ExpanderContract

    class TestAliasExpander(ExpanderContract):
        @pytest.fixture
        def expander(self):
            return AliasExpander()

        @pytest.fixture
        def expansion_context(self, tmp_path):
            return context_with_entity(tmp_path, "Kubernetes", aliases=["k8s"])

        @pytest.fixture
        def expanding_query(self):
            return "k8s rollout"
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from echo_core.protocols import Expander, WeightedTerm


def _query_words(query: str) -> set[str]:
    return {w for w in re.split(r"[\W_]+", query.casefold()) if w}


class ExpanderContract:
    """Contract tests for ``echo_core.protocols.Expander``.

    Fixtures to override:

    * ``expander`` -> the ``Expander`` as your plugin registers it. Required.
    * ``expansion_context`` -> the ``context`` passed to ``expand`` (whatever your
      expander consults, e.g. a vault with entities). Optional; ``None`` by default.
    * ``expanding_query`` -> a query that this expander, in that context, must expand to
      at least one term. Required.

    Checks: ``expand`` returns a ``list`` of ``WeightedTerm`` with non-empty terms and
    weights in ``(0, 1]``, never repeating the query's own words; an empty query gives
    ``[]``; the result is deterministic.
    """

    @pytest.fixture
    def expander(self) -> Expander:
        raise NotImplementedError("override the `expander` fixture to build your expander")

    @pytest.fixture
    def expansion_context(self) -> Any:
        return None

    @pytest.fixture
    def expanding_query(self) -> str:
        raise NotImplementedError(
            "override `expanding_query` with a query your expander expands in the context"
        )

    def test_implements_expander_protocol(self, expander: Expander) -> None:
        assert isinstance(expander, Expander)

    def test_expanding_query_yields_weighted_terms(
        self, expander: Expander, expansion_context: Any, expanding_query: str
    ) -> None:
        terms = expander.expand(expanding_query, expansion_context)
        assert isinstance(terms, list), f"expand must return a list, got {type(terms)}"
        assert terms, f"{expanding_query!r} should expand to at least one term"
        for term in terms:
            assert isinstance(term, WeightedTerm), f"{term!r} is not a WeightedTerm"
            assert isinstance(term.term, str) and term.term.strip(), f"empty term in {terms}"

    def test_weights_are_in_zero_one(
        self, expander: Expander, expansion_context: Any, expanding_query: str
    ) -> None:
        for term in expander.expand(expanding_query, expansion_context):
            assert 0 < term.weight <= 1, f"weight of {term.term!r} is {term.weight}"

    def test_query_words_are_not_returned(
        self, expander: Expander, expansion_context: Any, expanding_query: str
    ) -> None:
        own = _query_words(expanding_query)
        for term in expander.expand(expanding_query, expansion_context):
            assert term.term.casefold() not in own, (
                f"{term.term!r} is one of the query's own words; return only extra terms"
            )

    @pytest.mark.parametrize("query", ["", "   ", "\n\t"])
    def test_empty_query_expands_to_nothing(
        self, expander: Expander, expansion_context: Any, query: str
    ) -> None:
        assert expander.expand(query, expansion_context) == []

    def test_is_deterministic(
        self, expander: Expander, expansion_context: Any, expanding_query: str
    ) -> None:
        first = expander.expand(expanding_query, expansion_context)
        expander.expand("something else entirely", expansion_context)
        assert expander.expand(expanding_query, expansion_context) == first
