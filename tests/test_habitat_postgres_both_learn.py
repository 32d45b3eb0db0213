"""The learnings' search tests (``test_habitat_learn_search``), run with both backends:
its test functions imported, with this module's seeded ``box`` (a folder vault, or a
PostgreSQL one: ``test_habitat_postgres_both.make_box``). On PostgreSQL the search is
``learnings_pg.pg_learning_hits`` (tsvector, ``ts_rank``) where SQLite's is FTS5."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugins.habitat.learnings_ops import store_learning
from tests.capture_kit import VaultBox
from tests.postgres_kit import pg_schema_url, postgres_server
from tests.test_habitat_learn_search import (
    test_a_reinforcing_agent_counts_for_the_agent_filter,
    test_filters_by_agent_and_since,
    test_fts_syntax_in_a_query_is_never_interpreted,
    test_hits_are_json_dicts_best_first_with_the_promised_keys,
    test_stemming_tags_and_limit,
)
from tests.test_habitat_postgres_both import backend, make_box

__all__ = [
    "backend", "pg_schema_url", "postgres_server",  # fixtures
    "test_a_reinforcing_agent_counts_for_the_agent_filter",
    "test_filters_by_agent_and_since",
    "test_fts_syntax_in_a_query_is_never_interpreted",
    "test_hits_are_json_dicts_best_first_with_the_promised_keys",
    "test_stemming_tags_and_limit",
]


@pytest.fixture
def box(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> VaultBox:
    """``test_habitat_learn_search``'s three learnings, on ``backend``."""
    found = make_box(backend, request, tmp_path / "box")
    rows = [("Run the tests with pytest -n 2 before committing", "agent-a", "2026-03-01"),
            ("Deploys to staging need the VPN up", "agent-b", "2026-03-03"),
            ("The refund worker retries failed refunds three times", "agent-a", "2026-03-05")]
    for text, agent, today in rows:
        assert store_learning(found.ctx(ECHO_TODAY=today), text, agent_id=agent,
                              tags=("ops",)).ok
    return found
