"""The full sweep reads a large vault on two cores: a forked child reads and parses every
other note. The facts, the plan and the swept vault are the same as one process gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from echo_core.ops.sweep import full_sweep, note_facts
from echo_core.ops.sweep.note_facts import read_vault
from tests.capture_kit import VaultBox
from tests.fork_kit import force_forking, spy_forks
from tests.test_sweep_hand_written import write_hand_vault

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


def _vault(root: Path) -> VaultBox:
    """120 hand-written notes and two that are not UTF-8 (one in each half)."""
    box = VaultBox(root).init()
    write_hand_vault(box.vault, count=120)
    for name in ("aaa-bad", "zzz-bad"):
        (box.vault / f"resources/concepts/{name}.md").write_bytes(b"# Bad\n\n\xff\xfe\n")
    return box


def test_a_vault_read_on_two_cores_gives_the_facts_of_one_read_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = _vault(tmp_path)
    monkeypatch.setenv("ECHO_FORK", "0")
    here = read_vault(box.ctx())
    force_forking(monkeypatch)
    monkeypatch.setattr(note_facts, "APART_MIN_NOTES", 10)
    children = spy_forks(monkeypatch, note_facts)
    apart = read_vault(box.ctx())
    assert children and children[0] is not None  # every other note read in a child
    assert list(apart.notes) == list(here.notes) == sorted(here.notes)
    assert apart == here
    assert apart.unreadable == ("resources/concepts/aaa-bad.md",
                                "resources/concepts/zzz-bad.md")
    assert any(n.entity for n in here.notes.values()) and any(n.fill for n in here.notes.values())


def test_a_sweep_read_on_two_cores_writes_the_vault_of_one_read_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one, two = _vault(tmp_path / "one"), _vault(tmp_path / "two")
    monkeypatch.setenv("ECHO_FORK", "0")
    here = full_sweep(one.ctx(), apply=True).data
    force_forking(monkeypatch)
    monkeypatch.setattr(note_facts, "APART_MIN_NOTES", 10)
    children = spy_forks(monkeypatch, note_facts)
    apart = full_sweep(two.ctx(), apply=True).data
    assert children and children[0] is not None
    assert (apart.changes, apart.entities, apart.frontmatter, apart.links) == \
        (here.changes, here.entities, here.frontmatter, here.links)
    assert apart.changes > 0
    files = {p.relative_to(one.vault).as_posix(): p.read_bytes()
             for p in one.vault.rglob("*.md") if "_agent" not in p.parts}
    assert files == {p.relative_to(two.vault).as_posix(): p.read_bytes()
                     for p in two.vault.rglob("*.md") if "_agent" not in p.parts}
    assert one.index().entities == two.index().entities


def test_a_storage_that_does_not_say_its_reads_fork_is_read_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from plugins.storage_fs.folder_storage import FolderStorage

    box = _vault(tmp_path)
    force_forking(monkeypatch)
    monkeypatch.setattr(note_facts, "APART_MIN_NOTES", 10)
    monkeypatch.setattr(FolderStorage, "fork_safe_reads", False)
    children = spy_forks(monkeypatch, note_facts)
    assert read_vault(box.ctx()).notes
    assert children == []
