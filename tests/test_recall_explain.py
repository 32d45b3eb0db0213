"""``recall --explain`` (echo_core/ops/recall_explain.py): every hit says which query
stems it matched and with which of its words, the expansions and the entity alias that
brought them, its priors and the links followed; explaining never changes an answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.eval_gold import NOTES, QUERIES, Box, build_gold_vault
from echo_core import WeightedTerm, invoke
from echo_core.ops.recall import query_terms
from plugins.transport_cli.app import main
from tests.capture_kit import VaultBox


@pytest.fixture(scope="module")
def gold(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, str]]:
    box = Box(tmp_path_factory.mktemp("gold-explain"))
    paths = build_gold_vault(box)
    return box.context(today=NOTES[-1].day), paths


def _recall(ctx: Any, query: str, explain: bool) -> Any:
    return invoke(ctx, "recall", {"query": query, "limit": 10, "include_linked": False,
                                  "explain": explain})


@pytest.mark.parametrize("q", QUERIES, ids=lambda q: q.qid)
def test_every_gold_hit_names_the_stems_it_matched_and_the_answer_is_unchanged(
        gold: tuple[Any, dict[str, str]], q: Any) -> None:
    ctx, paths = gold
    plain = _recall(ctx, q.query, explain=False).data
    told = _recall(ctx, q.query, explain=True).data
    assert [(h.path, h.score) for h in told.primary] == [(h.path, h.score) for h in plain.primary]
    terms = {t.term for t in query_terms(ctx, q.query)[0]}
    relevant = {paths[k] for k in q.relevant}
    for rank, hit in enumerate(told.primary, start=1):
        why = hit.explain
        assert why is not None and why["rank"] == rank and why["score"] == hit.score
        assert why["ranker"] == "bm25" and why["hop"] == 0 and why["via"] is None
        named = {m["term"] for m in why["matched"]} | set(why["missing"])
        assert named == terms  # every query stem is either matched or missing
        for m in why["matched"]:
            assert m["words"], m  # the note's own words that make the stem
        if hit.path in relevant and q.kind != "alias":
            assert why["matched"], f"{q.qid}: relevant {hit.path} matched no query stem"


@pytest.mark.parametrize("q", [q for q in QUERIES if q.kind == "alias"], ids=lambda q: q.qid)
def test_an_alias_phrased_hit_names_the_alias_that_brought_it(
        gold: tuple[Any, dict[str, str]], q: Any) -> None:
    ctx, paths = gold
    told = _recall(ctx, q.query, explain=True).data
    relevant = {paths[k] for k in q.relevant}
    found = [h for h in told.primary[:5] if h.path in relevant]
    assert found, f"{q.qid}: no relevant hit in the top 5"
    for hit in found:
        sources = [e["source"] for e in hit.explain["expansions"]]
        assert any("alias" in s and "'" in s for s in sources), (q.qid, hit.explain)
        for expansion in hit.explain["expansions"]:
            assert expansion["words"] and expansion["weight"] < 1.0


def test_priors_are_the_specs_factors(gold: tuple[Any, dict[str, str]]) -> None:
    ctx, _ = gold
    for hit in _recall(ctx, QUERIES[0].query, explain=True).data.primary:
        p = hit.explain["priors"]
        assert p["kind"] == hit.type and p["status"] == hit.status
        assert 0.5 <= p["freshness"] <= 1.0
        assert p["prior"] == pytest.approx(p["corpus_weight"] * p["status_weight"]
                                           * p["freshness"], abs=1e-3)


def test_a_linked_hit_says_how_many_links_were_followed(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    box.capture("Analytical Engine", kind="concept", body="Punched cards drive the mill.")
    box.capture("Ada Lovelace", kind="person",
                body="Wrote notes on punched cards. See [[analytical-engine]] and [[charles-babbage]].")
    box.capture("Charles Babbage", kind="person", body="Designed the difference machine.")
    found = invoke(box.ctx(), "recall", {"query": "wrote", "explain": True}).data
    assert found.linked, "the fixture must give linked hits"
    for hit in found.linked:
        assert hit.explain["hop"] in (1, 2) and hit.explain["via"] == hit.via


def test_without_explain_hits_carry_none_and_the_json_says_null(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    box.capture("Analytical Engine", kind="concept", body="Punched cards drive the mill.")
    found = invoke(box.ctx(), "recall", {"query": "punched cards"}).data
    assert found.primary and all(h.explain is None for h in found.primary)


def test_the_cli_prints_why_under_each_hit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    box = VaultBox(tmp_path).init()
    box.capture("Vantage Systems", kind="company", aliases=("VS Corp",),
                body="Our hosting vendor.")
    box.capture("Pricing review", kind="project", body="Review Vantage Systems pricing.")
    for key, value in box.env(ECHO_VAULT=str(box.vault), ECHO_STATE_DIR=str(box.state)).items():
        monkeypatch.setenv(key, value)
    for args in (["recall", "VS Corp pricing", "--explain"],
                 ["recall", "VS Corp pricing", "--explain", "--json"]):
        with pytest.raises(SystemExit) as done:
            main(args)
        assert done.value.code == 0
        out = capsys.readouterr().out
        if "--json" in args:
            hits = json.loads(out)["primary"]
            review = next(h for h in hits if h["path"].endswith("pricing-review.md"))
            assert review["explain"]["missing"] == ["vs", "corp"]
            assert "alias 'VS Corp'" in review["explain"]["expansions"][0]["source"]
        else:
            assert "why: matched vs (VS), corp (Corp), price (pricing)" in out
            assert "missing vs, corp" in out
            assert "by its alias 'VS Corp'" in out


def test_an_expansions_source_takes_no_part_in_equality() -> None:
    assert WeightedTerm("vantag system", 0.5, False, "entity X") == WeightedTerm(
        "vantag system", 0.5)


def test_the_note_an_alias_names_is_marked_as_named_and_no_other(
        gold: tuple[Any, dict[str, str]]) -> None:
    ctx, _ = gold
    found = _recall(ctx, "what discount did VSYS offer", explain=True).data.primary
    named = {h.path: h.explain["named"] for h in found if h.explain["named"]}
    assert list(named) == ["resources/companies/vantage-systems.md"]
    assert "alias 'VSYS'" in named["resources/companies/vantage-systems.md"]
    plain = _recall(ctx, QUERIES[0].query, explain=True).data.primary
    assert plain and all(h.explain["named"] is None for h in plain)


def test_the_cli_says_when_the_query_names_the_note(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    box = VaultBox(tmp_path).init()
    box.capture("Vantage Systems", kind="company", aliases=("VS Corp",), body="Our hosting vendor.")
    for key, value in box.env(ECHO_VAULT=str(box.vault), ECHO_STATE_DIR=str(box.state)).items():
        monkeypatch.setenv(key, value)
    with pytest.raises(SystemExit) as done:
        main(["recall", "VS Corp", "--explain"])
    assert done.value.code == 0
    assert ("the query names this note: entity 'Vantage Systems', which the query names by "
            "its alias 'VS Corp'") in capsys.readouterr().out
