"""The folder backend's change probe sees what ``list`` sees: hidden entries skipped,
linked folders never descended, a linked file kept only when it stays in the vault."""

from __future__ import annotations

import os
from pathlib import Path

from plugins.storage_fs.folder_storage import FolderStorage


def test_the_tree_scan_lists_what_list_lists_and_nothing_outside(tmp_path: Path) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (vault / "notes/deep").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text("s", "utf-8")
    (vault / "notes/a.md").write_text("a", "utf-8")
    (vault / "notes/deep/b.md").write_text("bb", "utf-8")
    (vault / "notes/pic.png").write_bytes(b"\x89PNG")
    (vault / ".obsidian/app.md").write_text("h", "utf-8")
    os.symlink(outside, vault / "notes/linked-folder")
    os.symlink(outside / "secret.md", vault / "notes/leak.md")
    os.symlink(vault / "notes/a.md", vault / "notes/alias.md")
    storage = FolderStorage(str(vault))
    scan = storage.scan_tree("", ".md")
    assert sorted(scan.files) == ["notes/a.md", "notes/alias.md", "notes/deep/b.md"]
    assert scan.files["notes/deep/b.md"][0] == 2
    assert sorted(p for p in storage.list("") if p.endswith(".md")) == sorted(scan.files)
    assert sorted(scan.folders) == ["", "notes", "notes/deep"]
    everything = storage.scan_tree("")
    assert "notes/pic.png" in everything.files


def test_a_pruned_folder_is_left_out_with_everything_below_it(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "templates/deep").mkdir(parents=True)
    (vault / "notes").mkdir()
    (vault / "templates/t.md").write_text("t", "utf-8")
    (vault / "templates/deep/u.md").write_text("u", "utf-8")
    (vault / "notes/n.md").write_text("n", "utf-8")
    scan = FolderStorage(str(vault)).scan_tree("", ".md", ("templates",))
    assert sorted(scan.files) == ["notes/n.md"]
    assert sorted(scan.folders) == ["", "notes"]


def test_a_fifo_in_the_vault_is_not_a_file(tmp_path: Path) -> None:
    """A FIFO (or socket, device) is not listed: reading it would block, and backup
    reported it as 'deleted while the backup ran'."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/a.md").write_text("# a\n")
    os.mkfifo(tmp_path / "notes/pipe.md")
    assert FolderStorage(tmp_path).list("") == ["notes/a.md"]
