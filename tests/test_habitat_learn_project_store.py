"""The learnings store records each learning's project, on both backends (a folder
vault's SQLite file, a PostgreSQL vault's tables), and a store made before there was a
``project`` column is migrated in place: its learnings kept, each for every project."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from plugins.habitat.learnings import LearningStore
from plugins.habitat.learnings_ops import approve, open_store, store_learning
from plugins.habitat.learnings_schema import SCHEMA_VERSION
from tests.capture_kit import VaultBox
from tests.postgres_kit import pg_schema_url, postgres_server
from tests.test_habitat_postgres_both import PgBox, backend, make_box

__all__ = ["backend", "pg_schema_url", "postgres_server"]  # fixtures

NOW = {"ECHO_TODAY": "2026-12-07", "ECHO_NOW": "2026-12-07T10:00:00"}
ALPHA = "In alphaproj the staging host is behind the VPN."


@pytest.fixture
def box(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> VaultBox:
    return make_box(backend, request, tmp_path / "box")


def test_the_project_is_stored_widened_and_written_to_the_note(box: VaultBox) -> None:
    ctx = box.ctx(**NOW)
    first = store_learning(ctx, ALPHA, project="alphaproj").data.learning
    assert first.project == "alphaproj"
    assert open_store(ctx).get(first.id).project == "alphaproj"  # type: ignore[union-attr]
    again = store_learning(box.ctx(**NOW), ALPHA.lower(), project="ALPHAPROJ").data.learning
    assert (again.id, again.recurrence, again.project) == (first.id, 2, "alphaproj")
    path = approve(box.ctx(**NOW), first.id).data.insight_path
    assert box.ctx(**NOW).vault.read_note(path).frontmatter["project"] == "alphaproj"
    other = store_learning(box.ctx(**NOW), "Beta builds need Java 21",
                           project="betaproj").data.learning
    wide = store_learning(box.ctx(**NOW), "beta builds need java 21",
                          project="gammaproj").data.learning
    assert (wide.id, wide.project) == (other.id, "")
    assert {x.id: x.project for x in open_store(box.ctx(**NOW)).list()} == {
        first.id: "alphaproj", other.id: ""}


def _old_sqlite_store(path: Path) -> None:
    """``path`` as a store of schema version 1 (no ``project`` column) holding one
    learning."""
    LearningStore(path).list()
    conn = sqlite3.connect(path)
    try:
        conn.execute("ALTER TABLE learnings DROP COLUMN project")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        conn.execute(
            "INSERT INTO learnings (id, content, compact, words, type, tags, state, "
            "recurrence, agent_id, session_id, rationale, created, updated, last_seen) "
            "VALUES ('0ld1d000', 'Old learning', 'oldlearning', '[\"old\", \"learning\"]', "
            "'learning', '[]', 'pending', 1, 'a', 's', '', '2026-12-01T10:00:00', "
            "'2026-12-01T10:00:00', '2026-12-01T10:00:00')")
        conn.commit()
    finally:
        conn.close()


def test_a_sqlite_store_of_version_1_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "learnings.sqlite"
    _old_sqlite_store(path)
    store = LearningStore(path)
    assert [(x.id, x.project) for x in store.list()] == [("0ld1d000", "")]
    conn = sqlite3.connect(path)
    try:
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    finally:
        conn.close()
    assert int(version[0]) == SCHEMA_VERSION >= 2
    stamp = __import__("datetime").datetime(2026, 12, 7, 10, 0)
    done = store.store("New learning here", type="learning", tags=[], agent_id="a",
                       session_id="s", rationale="", now=stamp, project="alphaproj")
    assert done.learning.project == "alphaproj"


def test_postgres_tables_of_version_1_are_migrated(pg_schema_url: str,
                                                  tmp_path: Path) -> None:
    import psycopg

    box = PgBox(tmp_path / "pg", pg_schema_url)
    try:
        box.init()
        _migrated_on(box, psycopg)
    finally:
        box.close()


def _migrated_on(box: PgBox, psycopg: Any) -> None:
    ctx = box.ctx(**NOW)
    kept = store_learning(ctx, "Old learning before projects").data.learning
    schema = ctx.storage.schema  # type: ignore[attr-defined]
    with psycopg.connect(ctx.storage.target.conninfo) as conn:  # type: ignore[attr-defined]
        conn.execute(f'ALTER TABLE "{schema}".habitat_learnings DROP COLUMN project')
        conn.execute(f"UPDATE \"{schema}\".habitat_versions SET version = 1 WHERE store = "
                     "'learnings'")
    fresh = box.ctx(**NOW)  # a new process: its storage has not made sure of the tables
    assert [(x.id, x.project) for x in open_store(fresh).list()] == [(kept.id, "")]
    new = store_learning(fresh, "New learning with a project", project="alphaproj").data
    assert new.learning.project == "alphaproj"
    with psycopg.connect(ctx.storage.target.conninfo) as conn:  # type: ignore[attr-defined]
        row = conn.execute(f"SELECT version FROM \"{schema}\".habitat_versions WHERE store = "
                           "'learnings'").fetchone()
    assert row is not None and row[0] >= 2
