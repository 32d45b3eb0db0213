"""Two sessions' PreCompact checkpoints of one day are not duplicate entities to lint:
"2026-03-01 checkpoint 0a1b2c3d" and "... 9f8e7d6c" scored 0.80 and every pair of
sessions was a finding with the wrong fix ("merge them"); working memory is alike on
purpose and expires on its own. Other kinds are still checked."""

from __future__ import annotations

from pathlib import Path

from tests.capture_kit import VaultBox
from tests.lint_kit import run


def test_checkpoints_of_two_sessions_are_not_duplicates(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    for session in ("0a1b2c3d", "9f8e7d6c", "77aa88bb"):
        assert box.capture(f"2026-03-01 checkpoint {session}", kind="working",
                           body="Recent prompts", force=True).ok
    assert box.capture("Vantage Systems", kind="company", body="a").ok
    assert box.capture("Vantage Systems Inc", kind="company", body="b", force=True).ok
    found = [f for f in run(box).findings if f.check == "duplicate-entities"]
    assert [f.path for f in found] == ["resources/companies/vantage-systems.md"]
