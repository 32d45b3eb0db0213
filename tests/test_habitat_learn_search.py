"""``learning_hits`` for ``ask_habitat``: FTS5 over the learnings, filters by agent and
time, a query's own FTS syntax never interpreted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plugins.habitat.learning_search import learning_hits
from plugins.habitat.learnings_ops import store_learning
from tests.capture_kit import VaultBox


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path / "box").init()
    rows = [("Run the tests with pytest -n 2 before committing", "agent-a", "2026-03-01"),
            ("Deploys to staging need the VPN up", "agent-b", "2026-03-03"),
            ("The refund worker retries failed refunds three times", "agent-a", "2026-03-05")]
    for text, agent, today in rows:
        assert store_learning(box.ctx(ECHO_TODAY=today), text, agent_id=agent,
                              tags=("ops",)).ok
    return box


def test_hits_are_json_dicts_best_first_with_the_promised_keys(box: VaultBox) -> None:
    hits = learning_hits(box.ctx(), "refunds retried", 5)
    assert [h["content"] for h in hits] == [
        "The refund worker retries failed refunds three times"]
    hit = hits[0]
    assert {"id", "content", "type", "state", "recurrence", "score"} <= set(hit)
    assert hit["score"] > 0 and hit["state"] == "pending" and json.dumps(hits)


def test_stemming_tags_and_limit(box: VaultBox) -> None:
    assert len(learning_hits(box.ctx(), "deploying", 5)) == 1
    assert len(learning_hits(box.ctx(), "ops", 5)) == 3
    assert len(learning_hits(box.ctx(), "ops", 2)) == 2
    assert learning_hits(box.ctx(), "ops", 0) == []


def test_filters_by_agent_and_since(box: VaultBox) -> None:
    assert {h["agent_id"] for h in learning_hits(box.ctx(), "ops", 10, agent_id="agent-a")} \
        == {"agent-a"}
    assert learning_hits(box.ctx(), "ops", 10, agent_id="nobody") == []
    since = learning_hits(box.ctx(), "ops", 10, since="2026-03-03")
    assert sorted(h["updated"][:10] for h in since) == ["2026-03-03", "2026-03-05"]


def test_a_reinforcing_agent_counts_for_the_agent_filter(box: VaultBox) -> None:
    store_learning(box.ctx(), "deploys to staging need the VPN up!", agent_id="agent-c")
    hits = learning_hits(box.ctx(), "VPN", 5, agent_id="agent-c")
    assert len(hits) == 1 and hits[0]["recurrence"] == 2


@pytest.mark.parametrize("query", ['"', "NEAR(a b", "content: x OR", "*", "a AND", "(((", ""])
def test_fts_syntax_in_a_query_is_never_interpreted(box: VaultBox, query: str) -> None:
    assert isinstance(learning_hits(box.ctx(), query, 5), list)


def test_no_store_yet_means_no_hits(tmp_path: Path) -> None:
    fresh = VaultBox(tmp_path / "fresh").init()
    assert learning_hits(fresh.ctx(), "anything", 5) == []
    assert not list(fresh.state.rglob("learnings.sqlite"))
