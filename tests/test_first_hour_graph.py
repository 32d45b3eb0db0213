"""Issue 13, graph / alias expansion: what recall returns in a vault lived in for an hour
(agent-log hubs, checkpoints linked into people, loose alias words)."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.context import EchoContext
from echo_core.ops.recall import recall
from tests.capture_kit import VaultBox

ENGINE_TITLES = ("Search engine tuning", "Game engine notes", "Rules engine", "Engine oil",
                 "Steam engine history", "Template engine choice", "Engine room")


@pytest.fixture
def kappa(tmp_path: Path) -> VaultBox:
    """"Kappa Engine" (alias turbokappa), seven notes that say "engine", one that names
    Kappa Engine in full, and unrelated notes: all captured on one day."""
    box = VaultBox(tmp_path).init()
    assert box.capture("Kappa Engine", kind="project", aliases=("turbokappa",),
                       body="Our rendering core.").ok
    for title in ENGINE_TITLES:
        assert box.capture(title, kind="concept", body=f"About the {title.lower()}.").ok
    assert box.capture("Tile cache", kind="concept",
                       body="The tile cache sits in front of the Kappa Engine renderer.").ok
    assert box.capture("Parser refactor", kind="project",
                       body="Split the tokenizer from the parser.").ok
    return box


def _paths(ctx: EchoContext, query: str) -> tuple[list[str], list[str]]:
    data = recall(ctx, query).data
    return [h.path for h in data.primary], [h.path for h in data.linked]


def test_an_alias_query_finds_the_entity_and_notes_naming_it_not_notes_sharing_a_title_word(
        kappa: VaultBox) -> None:
    primary, linked = _paths(kappa.ctx(), "turbokappa")
    assert primary[0] == "projects/active/kappa-engine.md"
    assert "resources/concepts/tile-cache.md" in primary  # it names "Kappa Engine"
    engine_notes = [p for p in primary + linked if p.startswith("resources/concepts/")
                    and p != "resources/concepts/tile-cache.md"]
    assert engine_notes == []


def test_a_query_whose_only_other_match_is_a_title_word_returns_the_entity_alone(
        tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert box.capture("Kappa Engine", kind="project", aliases=("turbokappa",),
                       body="Rendering core.").ok
    assert box.capture("Engine oil", kind="concept", body="Change the engine oil yearly.").ok
    data = recall(box.ctx(), "turbokappa").data
    assert data.expansions == ("kappa engin",)  # the entity was recognised, as one phrase
    assert [h.path for h in data.primary] == ["projects/active/kappa-engine.md"]
    assert data.linked == ()


# --- item 5: agent-log lines are not links, not content --------------------------------------


def test_a_recall_hit_does_not_bring_in_every_note_captured_the_same_day(kappa: VaultBox) -> None:
    primary, linked = _paths(kappa.ctx(), "fix the failing unit test in parser.py")
    assert primary == ["projects/active/parser-refactor.md"]
    assert linked == []


def test_the_daily_note_is_not_found_through_its_agent_log_lines(kappa: VaultBox) -> None:
    primary, _ = _paths(kappa.ctx(), "steam engine history")
    assert "journal/daily/2026-03-01.md" not in primary


def test_what_a_person_writes_in_the_daily_note_still_links_and_is_found(kappa: VaultBox) -> None:
    daily = kappa.vault / "journal/daily/2026-03-01.md"
    daily.write_text(daily.read_text("utf-8") + "\n## Notes\nLong chat about the marmalade "
                     "recipe, see [[tile-cache]].\n", encoding="utf-8")
    data = recall(kappa.ctx(), "marmalade recipe").data
    assert [h.path for h in data.primary] == ["journal/daily/2026-03-01.md"]
    linked = [h.path for h in data.linked]  # the second hop: what the tile cache links to
    assert linked == ["resources/concepts/tile-cache.md", "projects/active/kappa-engine.md"]


def test_an_unrelated_coding_prompt_gets_no_agent_log_injected(tmp_path: Path) -> None:
    from plugins.hooks_claude.prompt_recall import prompt_context

    box = VaultBox(tmp_path).init()
    for topic in ("billing", "hiring", "travel", "garden", "tax", "music", "cooking", "running",
                  "reading", "backup", "laptop", "insurance"):
        assert box.capture(f"{topic} notes", kind="concept", body=f"All about {topic}.").ok
    for name in ("Ada Lovelace", "Grace Hopper", "Alan Turing"):
        assert box.capture(name, kind="person", body="A pioneer.").ok
    # "created concept ..." x12 and "created person ..." x3 in the daily note
    assert prompt_context(box.ctx(), "create a new concept class for the person model") is None
