"""backup leaves out only this vault's own earlier backups (zips in the backup folder
carrying this vault's id), and names them; a zip that merely looks like one (another
vault's backup kept as an attachment, a copy of ours elsewhere in the vault) is backed
up like any other file."""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import pytest

from echo_core.ops import vault_transfer_io
from echo_core.ops.backup import backup_vault
from tests.capture_kit import VaultBox

NAMED_LIKE_OURS = "attachments/echo-memory-vault-2025-01-01-000000.zip"


def _box(root: Path) -> VaultBox:
    """A vault in ``root / "vault"`` (every box's vault is named ``vault``)."""
    return VaultBox(root).init()


def _names(zip_path: str) -> list[str]:
    with zipfile.ZipFile(zip_path) as archive:
        return archive.namelist()


def test_another_vaults_backup_kept_as_an_attachment_is_backed_up(tmp_path: Path) -> None:
    ours, theirs = _box(tmp_path / "a"), _box(tmp_path / "b")
    their_zip = Path(backup_vault(theirs.ctx(), out=str(tmp_path / "bout")).data.path)
    (ours.vault / "attachments").mkdir()
    shutil.copyfile(their_zip, ours.vault / NAMED_LIKE_OURS)
    env = backup_vault(ours.ctx(), out=str(tmp_path / "aout"))
    assert env.ok and env.data.skipped == ()
    assert NAMED_LIKE_OURS in _names(env.data.path)
    with zipfile.ZipFile(env.data.path) as archive:
        assert archive.read(NAMED_LIKE_OURS) == their_zip.read_bytes()


def test_a_copy_of_our_own_backup_outside_the_backup_folder_is_backed_up(
        tmp_path: Path) -> None:
    box = _box(tmp_path)
    first = Path(backup_vault(box.ctx(ECHO_NOW="2026-03-01T09:00:00"),
                              out=str(tmp_path / "out")).data.path)
    (box.vault / "attachments").mkdir()
    shutil.copyfile(first, box.vault / "attachments" / first.name)
    env = backup_vault(box.ctx(ECHO_NOW="2026-03-01T10:00:00"), out=str(tmp_path / "out"))
    assert env.ok and env.data.skipped == ()
    assert f"attachments/{first.name}" in _names(env.data.path)


def test_our_own_backups_in_a_backup_folder_inside_the_vault_are_left_out_and_named(
        tmp_path: Path) -> None:
    box = _box(tmp_path)
    out = box.vault / "backups"
    first = Path(backup_vault(box.ctx(ECHO_NOW="2026-03-01T09:00:00"), out=str(out)).data.path)
    env = backup_vault(box.ctx(ECHO_NOW="2026-03-01T10:00:00"), out=str(out))
    assert env.ok, env.message  # leaving out our own backups is not an incomplete backup
    assert f"backups/{first.name}" not in _names(env.data.path)
    assert [s.path for s in env.data.skipped] == [f"backups/{first.name}"]
    assert "earlier backup of this vault" in env.data.skipped[0].reason



def test_a_backend_without_a_local_folder_knows_our_backups_by_size_and_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = _box(tmp_path)
    out = box.vault / "backups"
    first = Path(backup_vault(box.ctx(ECHO_NOW="2026-03-01T09:00:00"), out=str(out)).data.path)
    (box.vault / "attachments").mkdir()
    shutil.copyfile(first, box.vault / "attachments" / first.name)  # a copy: another mtime
    os.utime(box.vault / "attachments" / first.name, (1e9, 1e9))
    monkeypatch.setattr(vault_transfer_io, "vault_folder", lambda storage: None)  # remote
    env = backup_vault(box.ctx(ECHO_NOW="2026-03-01T10:00:00"), out=str(out))
    assert env.ok and [s.path for s in env.data.skipped] == [f"backups/{first.name}"]
    assert f"attachments/{first.name}" in _names(env.data.path)
