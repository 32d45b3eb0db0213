"""The habitat's own behaviour tests, run again with both backends: a folder vault and a
PostgreSQL vault (``backend`` fixture param).

The test functions are the existing ones, imported: pytest collects them here, where
``box`` and ``store`` are this module's fixtures, so the same assertions hold for the
record's search (records written to the loom's day files: on a PostgreSQL vault that is
the machine's spool, shipped before each search), the learnings' search and the pattern
registry. Learnings: ``test_habitat_postgres_both_learn.py`` (its ``box`` is seeded).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from echo_core.context import EchoContext, create_context
from plugins.habitat.patterns import PatternStore, pattern_store
from tests.capture_kit import VaultBox
from tests.postgres_kit import close_storages, pg_schema_url, postgres_server
from tests.test_habitat_detect_registry import (
    test_a_dismissed_pattern_keeps_its_status_and_gains_evidence,
    test_a_fix_that_works_holds_until_the_failure_recurs_after_it,
    test_a_streak_found_again_longer_adds_evidence_not_recurrence,
    test_failures_fill_batches_of_eight_in_order_and_stay_there,
    test_hostile_names_are_data,
    test_one_signature_is_one_pattern_whose_recurrence_counts_occurrences,
    test_severity_is_the_worst_occurrence_raised_after_five,
)
from tests.test_habitat_loom_search import (
    test_a_query_without_words_finds_nothing,
    test_a_record_appended_a_moment_ago_is_found,
    test_a_torn_tail_is_indexed_only_once_whole,
    test_every_word_ranks_first_then_any_word_fills,
    test_filters_agent_kind_and_time_window,
    test_hostile_queries_are_plain_words,
)

__all__ = [
    "pg_schema_url", "postgres_server",  # fixtures
    "test_a_dismissed_pattern_keeps_its_status_and_gains_evidence",
    "test_a_fix_that_works_holds_until_the_failure_recurs_after_it",
    "test_a_query_without_words_finds_nothing",
    "test_a_record_appended_a_moment_ago_is_found",
    "test_a_streak_found_again_longer_adds_evidence_not_recurrence",
    "test_a_torn_tail_is_indexed_only_once_whole",
    "test_every_word_ranks_first_then_any_word_fills",
    "test_failures_fill_batches_of_eight_in_order_and_stay_there",
    "test_filters_agent_kind_and_time_window",
    "test_hostile_names_are_data",
    "test_hostile_queries_are_plain_words",
    "test_one_signature_is_one_pattern_whose_recurrence_counts_occurrences",
    "test_severity_is_the_worst_occurrence_raised_after_five",
]


class PgBox(VaultBox):
    """A ``VaultBox`` whose contexts open the PostgreSQL vault ``url`` (its folder stays
    empty; the state dir is the box's, as on a folder vault)."""

    def __init__(self, root: Path, url: str) -> None:
        super().__init__(root)
        self.url = url
        self.made: list[EchoContext] = []

    def ctx(self, **env: str) -> EchoContext:
        ctx = create_context(vault=self.url, state_dir=str(self.state), env=self.env(**env))
        self.made.append(ctx)
        return ctx

    def close(self) -> None:
        close_storages(self.made)


@pytest.fixture(params=["folder", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def make_box(backend: str, request: pytest.FixtureRequest, root: Path) -> VaultBox:
    """An initialised box of ``backend`` (a PostgreSQL one closed after the test)."""
    if backend == "folder":
        return VaultBox(root).init()
    url = request.getfixturevalue("pg_schema_url")
    box = PgBox(root, url)
    request.addfinalizer(box.close)
    return box.init()


@pytest.fixture
def box(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> VaultBox:
    return make_box(backend, request, tmp_path / "box")


@pytest.fixture
def store(backend: str, request: pytest.FixtureRequest, tmp_path: Path
          ) -> Iterator[PatternStore]:
    if backend == "folder":
        yield PatternStore(tmp_path / "habitat" / "patterns.sqlite")
        return
    found = make_box(backend, request, tmp_path / "box")
    yield pattern_store(found.ctx())
