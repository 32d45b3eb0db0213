"""lint --fix (SPEC §5.2): a dry run lists the mechanical repairs and changes no byte;
--apply makes them (through the vault: history kept), after which only the findings a
person must decide on remain, and a vault with only mechanical violations is clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.ops.lint.run import lint
from tests.lint_kit import ENGINE, MECHANICAL, PLANTED, SCRATCH, box_like, found, run

BABBAGE = PLANTED["incomplete-frontmatter"]


def test_dry_run_lists_the_repairs_and_changes_no_byte(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    box = box_like("planted", tmp_path, tmp_path_factory)
    vault_before, state_files = box.tree_digest(), sorted(box.state.rglob("*"))
    env = lint(box.ctx(), fix=True)
    assert env.action == "dry-run" and not env.ok
    assert {(r.path, r.applied) for r in env.data.repairs} == {
        (PLANTED[name], False) for name in MECHANICAL}
    assert box.tree_digest() == vault_before
    assert sorted(box.state.rglob("*")) == state_files
    assert found(env.data) == set(PLANTED.items())


def test_apply_mends_the_mechanical_ones_and_keeps_the_rest(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    box = box_like("planted", tmp_path, tmp_path_factory)
    env = lint(box.ctx(), fix=True, apply=True)
    assert all(r.applied for r in env.data.repairs) and len(env.data.repairs) == 3
    left = {(name, path) for name, path in PLANTED.items() if name not in MECHANICAL}
    assert found(env.data) == left
    assert found(run(box)) == left  # a second lint agrees
    fm = box.frontmatter(BABBAGE)
    assert fm["type"] == "person" and fm["status"] == "active" and fm["tags"] == ["person"]
    assert box.read(BABBAGE).endswith("# Charles Babbage\n\nDesigned the [[analytical-engine]].\n")
    assert box.frontmatter(SCRATCH)["status"] == "archived"  # as sweep --decay does
    assert box.entity("analytical-engine").title == "The Analytical Engine"
    versions = box.ctx().history.versions(SCRATCH)
    assert versions, "the note's previous version is kept"


def test_a_vault_with_only_mechanical_violations_is_clean_after_apply(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    box = box_like("mechanical", tmp_path, tmp_path_factory)
    before = run(box)
    assert {f.check for f in before.findings} == MECHANICAL
    env = lint(box.ctx(), fix=True, apply=True)
    assert env.ok and env.data.findings == ()
    assert run(box).findings == ()


def test_an_index_entry_whose_note_is_gone_is_dropped(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    box = box_like("clean", tmp_path, tmp_path_factory)
    (box.vault / ENGINE).unlink()
    result = run(box, checks=("index-drift",))
    assert found(result) == {("index-drift", ENGINE)}
    assert "gone" in result.findings[0].problem
    assert lint(box.ctx(), ("index-drift",), fix=True, apply=True).ok
    assert box.index().by_path(ENGINE) is None
