"""lint (SPEC §5.2): on a vault with one planted violation of every check, each is
found exactly once, on the note planted; on a clean vault nothing is found."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from echo_core.ops.lint import run as lint_run
from echo_core.ops.lint.registry import CHECK_NAMES
from tests.capture_kit import VaultBox
from tests.fork_kit import force_forking, spy_forks
from tests.lint_kit import PLANTED, box_like, run


@pytest.fixture
def planted(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> VaultBox:
    return box_like("planted", tmp_path, tmp_path_factory)


def test_every_check_has_one_planted_violation() -> None:
    assert set(PLANTED) == set(CHECK_NAMES)


def test_a_clean_vault_has_no_findings(tmp_path: Path,
                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    result = run(box_like("clean", tmp_path, tmp_path_factory))
    assert result.findings == ()
    assert all(c.count == 0 for c in result.checks)
    assert result.notes > 10


def test_each_planted_violation_is_found_exactly_once(planted: VaultBox) -> None:
    result = run(planted)
    per_check = Counter(f.check for f in result.findings)
    assert per_check == Counter({name: 1 for name in CHECK_NAMES}), result.findings
    assert {f.check: f.path for f in result.findings} == PLANTED
    assert {c.name: c.count for c in result.checks} == {name: 1 for name in CHECK_NAMES}
    for finding in result.findings:
        assert finding.problem and finding.fix


def test_findings_say_what_and_name_the_other_note(planted: VaultBox) -> None:
    result = run(planted)
    by_check = {f.check: f for f in result.findings}
    assert "[[Nobody Here]]" in by_check["broken-wikilink"].problem
    assert by_check["duplicate-entities"].other == "resources/people/grace-hopper.md"
    contradiction = by_check["contradiction"]
    assert "Always use pytest" in contradiction.problem
    assert "Never use pytest" in contradiction.problem
    assert contradiction.other == "_agent/memory/semantic/test-runner-habits.md"
    assert "title" in by_check["index-drift"].problem
    assert "engine-mark-two" in by_check["dangling-superseded-by"].problem


def test_check_selection_runs_only_those(planted: VaultBox) -> None:
    box = planted
    result = run(box, checks=("orphan-note", "stale-scope"))
    assert [c.name for c in result.checks] == ["orphan-note", "stale-scope"]
    assert {f.check for f in result.findings} == {"orphan-note", "stale-scope"}


def test_quality_scores_every_entity_note(planted: VaultBox) -> None:
    box = planted
    result = run(box)
    scores = {s.path: s for s in result.scores}
    assert "resources/people/ada-lovelace.md" in scores
    assert all(0.0 <= s.score <= 1.0 for s in scores.values())
    bare = scores["resources/people/charles-babbage.md"]  # no frontmatter, no updated
    assert bare.frontmatter == 0 and bare.freshness == 0 and bare.score < 0.7
    assert scores["resources/people/ada-lovelace.md"].score > bare.score


def test_a_check_run_apart_in_a_forked_child_finds_the_same(planted: VaultBox,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ECHO_FORK", "0")
    here = run(planted)
    force_forking(monkeypatch)
    monkeypatch.setattr(lint_run, "APART_MIN_NOTES", 0)  # the planted vault is small
    children = spy_forks(monkeypatch, lint_run)
    apart = run(planted)
    assert children and all(pid is not None for pid in children)  # it did run apart
    assert apart.findings == here.findings
    assert apart.checks == here.checks


def test_a_decision_and_the_one_superseding_it_are_not_called_duplicates(
        tmp_path: Path) -> None:
    """The README's "When a fact changes": the old decision is kept on purpose, linked
    both ways; lint does not suggest deleting it. A near-name pair not so linked still is."""
    box = VaultBox(tmp_path).init()
    assert box.capture("Deploy on Fridays", kind="decision", today="2026-03-01",
                       body="We deploy on Fridays.").ok
    assert box.capture("No deploys on Fridays", kind="decision", today="2026-03-01",
                       body="Not any more.", supersedes="2026-03-01-deploy-on-fridays").ok
    assert box.capture("Grace Hopper", kind="person", body="Admiral.").ok
    assert box.capture("Grace B. Hopper", kind="person", body="Typo.", force=True).ok
    found = [(f.path, f.other) for f in run(box, checks=("duplicate-entities",)).findings]
    assert found == [("resources/people/grace-b-hopper.md", "resources/people/grace-hopper.md")]
