"""``recall --as-of`` matches the words a note held on the day, not its words now
(SPEC §3.3): a query in a note's old wording finds it as of a day that wording was
current (its archived version answers), a query in its new wording does not find it as of
a day before it was written, and the hit's excerpt always holds the words asked for."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from echo_core.ops.evolve import evolve_note
from echo_core.ops.recall_as_of import recall_as_of
from tests.capture_kit import VaultBox

NOTE = "resources/concepts/deploy-process.md"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    """Deploy Process: Jenkins from 2026-01-02, Argo CD from 2026-02-01, Flux from
    2026-03-01; another note about the office printer."""
    box = VaultBox(tmp_path).init()
    assert box.capture("Deploy Process", kind="concept", today="2026-01-02",
                       body="Deploys run from Jenkins nightly.").ok
    assert box.capture("Office Printer", kind="concept", today="2026-01-02",
                       body="The printer jams on Mondays.").ok
    for day, old, new in (("2026-02-01", "Jenkins", "Argo CD"), ("2026-03-01", "Argo CD", "Flux")):
        text = box.read(NOTE).replace(old, new)
        env = evolve_note(box.ctx(ECHO_TODAY=day, ECHO_NOW=f"{day}T10:00:00"), NOTE,
                          f"moved to {new}", text)
        assert env.ok and env.data.changed, env
    return box


def _hits(box: VaultBox, query: str, day: str) -> list[tuple[str, str]]:
    env = recall_as_of(box.ctx(ECHO_TODAY="2026-06-30"), query, _dt.date.fromisoformat(day),
                       include_linked=False)
    assert env.ok, env
    return [(h.path, h.excerpt) for h in env.data.primary]


@pytest.mark.parametrize(("query", "day", "tool"), [
    ("jenkins", "2026-01-15", "Jenkins"), ("argo", "2026-02-15", "Argo CD"),
    ("flux", "2026-03-15", "Flux")])
def test_as_of_finds_a_note_by_the_words_it_held_that_day(
        box: VaultBox, query: str, day: str, tool: str) -> None:
    hits = _hits(box, query, day)
    assert len(hits) == 1, hits
    path, excerpt = hits[0]
    assert path.startswith("_agent/archive/") or path == NOTE
    assert f"Deploys run from {tool} nightly." in excerpt


@pytest.mark.parametrize(("query", "day"), [
    ("flux", "2026-01-15"), ("flux", "2026-02-15"), ("jenkins", "2026-02-15"),
    ("jenkins", "2026-03-15"), ("argo", "2026-01-15")])
def test_as_of_leaves_out_a_note_whose_text_that_day_lacked_the_words(
        box: VaultBox, query: str, day: str) -> None:
    assert _hits(box, query, day) == []


def test_as_of_ranks_an_old_wording_among_notes_matched_by_their_text_now(
        box: VaultBox) -> None:
    hits = _hits(box, "jenkins printer", "2026-01-15")
    assert len(hits) == 2, hits
    assert any("Jenkins" in excerpt for _, excerpt in hits)
    assert any("printer jams" in excerpt for _, excerpt in hits)
