"""Note history kept in the vault's own store (echo_core/history_files.py) for a backend
that shares it between machines (``shared_history``, PostgreSQL): versions written by one
machine are listed and restorable on another (another state dir), the ring still keeps
20, and nothing of it is a note, indexed or listed among the vault's notes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from echo_core import create_context, invoke
from echo_core.history import RING_SIZE
from echo_core.history_files import HISTORY_PREFIX, LocalHistoryFiles, StorageHistoryFiles
from tests.capture_kit import VaultBox

NOTE = "resources/concepts/engine.md"


def _machine(box: VaultBox, name: str) -> Any:
    """A context on ``box``'s vault with its own state dir (another machine), whose
    storage says history is shared."""
    ctx = create_context(vault=str(box.vault), state_dir=str(box.root / f"state-{name}"),
                         env=box.env())
    ctx.storage.shared_history = True
    return ctx


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def test_a_shared_store_keeps_history_in_its_hidden_folder(box: VaultBox) -> None:
    ctx = _machine(box, "a")
    assert isinstance(ctx.history.files, StorageHistoryFiles)
    ctx.vault.write_note(NOTE, "# Engine\n\nfirst\n")
    ctx.vault.write_note(NOTE, "# Engine\n\nsecond\n")
    assert any((box.vault / HISTORY_PREFIX).rglob("versions.ndjson"))
    assert not list((box.root / "state-a").glob("**/history/*"))


def test_another_machine_lists_and_restores_the_versions(box: VaultBox) -> None:
    a, b = _machine(box, "a"), _machine(box, "b")
    a.vault.write_note(NOTE, "# Engine\n\nfirst\n")
    a.vault.write_note(NOTE, "# Engine\n\nsecond\n")
    versions = b.history.versions(NOTE)
    assert [b.history.text(NOTE, v) for v in versions] == ["# Engine\n\nfirst\n"]
    found = invoke(b, "restore", {"path": NOTE, "version_id": versions[0].version_id,
                                  "confirm": True})
    assert found.ok and box.read(NOTE) == "# Engine\n\nfirst\n"
    assert a.history.versions(NOTE)[0].sha != versions[0].sha  # "second" kept on restore


def test_the_shared_ring_keeps_the_newest_twenty(box: VaultBox) -> None:
    ctx = _machine(box, "a")
    for i in range(RING_SIZE + 6):
        ctx.vault.write_note(NOTE, f"# version {i}\n")
    versions = ctx.history.versions(NOTE)
    assert len(versions) == RING_SIZE
    assert [ctx.history.text(NOTE, v) for v in versions] == [
        f"# version {i}\n" for i in range(RING_SIZE + 4, 4, -1)]
    folders = [p for p in (box.vault / HISTORY_PREFIX).iterdir() if p.is_dir()]
    assert len(folders) == 1 and len(list(folders[0].iterdir())) == RING_SIZE + 1


def test_history_files_are_not_notes(box: VaultBox) -> None:
    ctx = _machine(box, "a")
    ctx.vault.write_note(NOTE, "# Engine\n\nfirst\n")
    ctx.vault.write_note(NOTE, "# Engine\n\nsecond\n")
    found = invoke(ctx, "recall", {"query": "first", "include_linked": False}).data
    assert all(not h.path.startswith(HISTORY_PREFIX) for h in found.primary)
    invoke(ctx, "reindex", {})
    assert ctx.ranker.paths() and not [p for p in ctx.ranker.paths()
                                       if p.startswith(HISTORY_PREFIX)]


def test_without_the_flag_history_stays_in_the_state_dir(box: VaultBox) -> None:
    ctx = box.ctx()
    assert isinstance(ctx.history.files, LocalHistoryFiles)
    ctx.vault.write_note(NOTE, "# Engine\n\nfirst\n")
    ctx.vault.write_note(NOTE, "# Engine\n\nsecond\n")
    assert not (box.vault / HISTORY_PREFIX).exists()
