"""``OverlayStorage`` (reflect's preview): a full ``Storage`` under the contract suite,
whose writes never reach the vault beneath it."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.ops.reflect_overlay import OverlayStorage
from echo_core.testing.storage_contract import StorageContract, StorageSpec
from plugins.storage_fs.folder_storage import FolderStorage


class TestReflectOverlayStorage(StorageContract):
    """The contract, over an empty folder vault (the lock is the folder's)."""

    @pytest.fixture
    def storage(self, tmp_path: Path) -> OverlayStorage:
        return OverlayStorage(FolderStorage(str(tmp_path)))

    @pytest.fixture
    def storage_factory_spec(self, tmp_path: Path) -> StorageSpec:
        return StorageSpec("plugins.storage_fs.folder_storage:FolderStorage",
                           (str(tmp_path),))


def test_reflect_overlay_reads_through_and_writes_only_in_memory(tmp_path: Path) -> None:
    base = FolderStorage(str(tmp_path))
    base.write("a/kept.md", "kept\n")
    base.write("a/gone.md", "gone\n")
    overlay = OverlayStorage(base)
    overlay.write("a/new.md", "new\n")
    overlay.append_line("a/kept.md", "- added")
    overlay.delete("a/gone.md")
    assert overlay.read("a/kept.md") == "kept\n- added\n"
    assert overlay.list("a") == ["a/kept.md", "a/new.md"]
    assert overlay.read_many(["a/gone.md", "a/new.md"]) == {"a/gone.md": None,
                                                            "a/new.md": "new\n"}
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["gone.md", "kept.md"]
    assert base.read("a/kept.md") == "kept\n"


def test_reflect_overlay_stat_changes_with_each_write(tmp_path: Path) -> None:
    overlay = OverlayStorage(FolderStorage(str(tmp_path)))
    overlay.write("j.md", "x\n")
    first = overlay.stat("j.md")
    overlay.write("j.md", "y\n")
    assert overlay.stat("j.md").mtime > first.mtime
    assert overlay.stat("j.md").size == 2
