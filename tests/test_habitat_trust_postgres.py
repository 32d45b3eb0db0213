"""The operator's text is redacted before it is stored on both backends: a folder vault
(SQLite, day files) and a PostgreSQL vault (``patterns_pg``, ``learnings_pg``,
``loom_pg``): the redaction is made before the store is chosen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from plugins.habitat.learnings_ops import open_store, reject, store_learning
from plugins.habitat.patterns import pattern_store
from plugins.habitat.patterns_ops import flag_turn, show_pattern
from plugins.habitat.record_source import record_source
from plugins.habitat.record_verbs import RecordParams, run_record
from tests.capture_kit import VaultBox
from tests.postgres_kit import pg_schema_url, postgres_server
from tests.test_habitat_postgres_both import backend, make_box
from tests.test_habitat_trust_redaction import ANTHROPIC, AWS, GITHUB

__all__ = ["backend", "pg_schema_url", "postgres_server"]  # fixtures

NOW = "2026-03-01T09:30:00"


@pytest.fixture
def box(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> VaultBox:
    return make_box(backend, request, tmp_path / "box")


def _clear(*values: Any) -> bool:
    text = json.dumps([attrs.asdict(v) if attrs.has(type(v)) else v for v in values],
                      default=str).lower()
    return not any(s.lower() in text for s in (ANTHROPIC, AWS, GITHUB)) and "zqzqzq" not in text


def test_flags_notes_learnings_and_records_are_stored_redacted(box: VaultBox) -> None:
    ctx = box.ctx(ECHO_NOW=NOW, ECHO_TODAY=NOW[:10])
    assert run_record(ctx, RecordParams(session_id="sess-1", kind="prompt",
                                        text="deploy it")).ok
    assert run_record(ctx, RecordParams(session_id=f"s {AWS}", agent_id=f"a {GITHUB}",
                                        refs=(ANTHROPIC,), text="x")).ok
    flagged = flag_turn(ctx, "sess-1", "1", f"pasted {ANTHROPIC}")
    show_pattern(ctx, flagged.data.pattern_id, status="dismissed", note=f"ours {GITHUB}")
    stored = store_learning(ctx, "Pin numpy below 2", tags=(GITHUB, AWS),
                            agent_id=f"codex {ANTHROPIC}", session_id=f"run {GITHUB}")
    reject(ctx, stored.data.learning.id, f"leaked {ANTHROPIC}")

    patterns = pattern_store(ctx)
    (pattern,) = patterns.list()
    assert pattern.title == "flagged: pasted [redacted:anthropic-key]"
    assert _clear(pattern, patterns.occurrences(), patterns.transitions(pattern.id))
    learning = open_store(ctx).get(stored.data.learning.id)
    assert learning is not None and learning.reason == "leaked [REDACTED:anthropic-key]"
    assert learning.tags == ("redacted-github-token", "redacted-aws-access-key-id")
    assert _clear(learning, open_store(ctx).provenance(learning.id))
    records = list(record_source(ctx).records())
    assert len(records) == 3 and _clear(*records)
    assert {r.session_id for r in records} == {"sess-1", "s [REDACTED:aws-access-key-id]"}
