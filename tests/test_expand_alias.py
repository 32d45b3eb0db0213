"""The alias expander (SPEC §3.1): names of entities the query mentions, at weight 0.5."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import plugins.expand_alias
from echo_core.context import EchoContext
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.testing import ExpanderContract, PluginContract
from plugins.expand_alias.alias_expander import AliasExpander
from tests.capture_kit import VaultBox


@pytest.fixture
def vantage_ctx(tmp_path: Path) -> EchoContext:
    ctx = VaultBox(tmp_path).init().ctx()
    capture(ctx, CaptureRequest(title="Vantage Systems", kind="company",
                                aliases=("VS Corp",), body="Analytics vendor."))
    capture(ctx, CaptureRequest(title="Kubernetes", kind="concept", aliases=("k8s",),
                                body="Container orchestration."))
    return ctx


class TestAliasExpander(ExpanderContract):
    @pytest.fixture
    def expander(self) -> AliasExpander:
        return AliasExpander()

    @pytest.fixture
    def expansion_context(self, vantage_ctx: EchoContext) -> Any:
        return vantage_ctx

    @pytest.fixture
    def expanding_query(self) -> str:
        return "k8s rollout plan"


class TestExpandAliasPlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.expand_alias

    @pytest.fixture
    def plugin_name(self) -> str:
        return "expand_alias"


def test_alias_query_gains_the_title_as_one_phrase_at_half_weight(vantage_ctx: EchoContext) -> None:
    terms = AliasExpander().expand("VS Corp pricing", vantage_ctx)
    assert [t.term for t in terms] == [" ".join(vantage_ctx.tokenizer.tokenize("Vantage Systems"))]
    assert all(t.weight == 0.5 for t in terms)


def test_title_query_gains_the_alias_as_one_phrase(vantage_ctx: EchoContext) -> None:
    terms = [t.term for t in AliasExpander().expand("Vantage Systems pricing", vantage_ctx)]
    assert terms == [" ".join(vantage_ctx.tokenizer.tokenize("VS Corp"))]


def test_a_one_word_name_expands_to_that_word(vantage_ctx: EchoContext) -> None:
    terms = [t.term for t in AliasExpander().expand("k8s rollout", vantage_ctx)]
    assert terms == vantage_ctx.tokenizer.tokenize("Kubernetes")


def test_query_naming_no_entity_expands_to_nothing(vantage_ctx: EchoContext) -> None:
    assert AliasExpander().expand("weather in lisbon", vantage_ctx) == []


def test_every_expansion_names_the_entity_note_it_came_from(vantage_ctx: EchoContext) -> None:
    terms = AliasExpander().expand("VS Corp pricing", vantage_ctx)
    assert [t.names for t in terms] == ["resources/companies/vantage-systems.md"]
    assert "Vantage Systems" in vantage_ctx.vault.storage.read(terms[0].names)


def test_the_phrase_tokens_recall_searches_with_keep_the_named_note(
        vantage_ctx: EchoContext) -> None:
    from echo_core.ops.recall_phrases import boost_terms, split_phrases

    words, phrases = split_phrases(AliasExpander().expand("VS Corp pricing", vantage_ctx))
    boosts = boost_terms(phrases, {"pric"})
    assert not words and boosts
    assert {t.names for t in boosts} == {"resources/companies/vantage-systems.md"}
    assert all(t.boost_only for t in boosts)


def test_a_loose_match_names_no_note(vantage_ctx: EchoContext) -> None:
    """"vantage pricing" holds half of the name "Vantage Systems": the alias comes in,
    but the query is not taken to name the entity's note."""
    terms = AliasExpander().expand("vantage pricing", vantage_ctx)
    assert terms and all(t.names == "" for t in terms)
