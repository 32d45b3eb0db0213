"""backup rotation (SPEC §5.6) deletes only this vault's older backups: never another
vault's that shares the folder name, never one written before the vault id was recorded,
never the zip it has just written (several backups in one second); and a file name that
is not UTF-8 is skipped and named (the backup says it is incomplete) instead of failing
the whole backup."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from echo_core.ops.backup import backup_pattern, backup_vault
from tests.capture_kit import VaultBox
from tests.conftest import run_cli

NOW = "2026-03-01T09:30:05"
ADA = "resources/people/ada-lovelace.md"


def _box(root: Path) -> VaultBox:
    """A vault in ``root / "vault"``: every box's vault folder is named ``vault``."""
    box = VaultBox(root).init()
    assert box.capture("Ada Lovelace", kind="person", body="Mathematician").data.path == ADA
    return box


def _order(name: str) -> tuple[str, int]:
    """How rotation orders backups: timestamp, then suffix (none is 1)."""
    match = backup_pattern("vault").fullmatch(name)
    assert match is not None, name
    return match.group(1), int(match.group(2) or 1)


def _zips(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_rotation_never_deletes_another_vaults_backups_with_the_same_folder_name(
        tmp_path: Path) -> None:
    a, b = _box(tmp_path / "a"), _box(tmp_path / "b")
    assert a.vault.name == b.vault.name and a.vault != b.vault
    out = tmp_path / "out"
    theirs = Path(backup_vault(b.ctx(ECHO_NOW="2026-03-01T09:00:00"), out=str(out)).data.path)
    ours = [backup_vault(a.ctx(ECHO_NOW=f"2026-03-01T10:0{m}:00"), keep=1, out=str(out))
            for m in range(3)]
    assert all(env.ok for env in ours)
    assert ours[-1].data.removed == (Path(ours[1].data.path).name,)
    assert _zips(out) == sorted([theirs.name, Path(ours[-1].data.path).name])
    with zipfile.ZipFile(theirs) as archive:
        assert archive.testzip() is None


def test_a_backup_written_without_a_vault_id_is_never_rotated(tmp_path: Path) -> None:
    box = _box(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    old = out / "echo-memory-vault-2026-01-01-000000.zip"  # as older versions named it
    with zipfile.ZipFile(old, "w") as archive:
        archive.writestr("note.md", "kept")
    for minute in range(2):
        env = backup_vault(box.ctx(ECHO_NOW=f"2026-03-01T10:0{minute}:00"), keep=1, out=str(out))
    assert env.ok and old.exists()
    assert _zips(out) == sorted([old.name, Path(env.data.path).name])


def test_cli_backup_keep_1_leaves_the_other_vaults_zip(
        isolated_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    for root in (tmp_path / "a", tmp_path / "b"):
        box = _box(root)
        done = run_cli(["backup", "--keep", "1", "--out", str(out), "--vault", str(box.vault),
                        "--state-dir", str(box.state)], env=isolated_env)
        assert done.returncode == 0, done.stderr
        assert "removed" not in done.stdout
    assert len(_zips(out)) == 2


@pytest.mark.parametrize("keep", [1, 2])
def test_five_backups_in_one_second_keep_the_newest_n_each_whole(
        tmp_path: Path, keep: int) -> None:
    box = _box(tmp_path)
    out = tmp_path / "out"
    written = []
    for _ in range(5):
        env = backup_vault(box.ctx(ECHO_NOW=NOW), keep=keep, out=str(out))
        assert env.ok, env.message
        assert Path(env.data.path).exists()
        written.append(Path(env.data.path).name)
    assert len(set(written)) == 5
    assert _zips(out) == sorted(written[-keep:])
    for name in written[-keep:]:
        with zipfile.ZipFile(out / name) as archive:
            assert archive.testzip() is None
            assert ADA in archive.namelist()
    assert max(written, key=_order) == written[-1]


def test_cli_third_backup_in_one_second_exits_0(
        isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = _box(tmp_path)
    out = tmp_path / "out"
    args = ["backup", "--keep", "1", "--out", str(out), "--vault", str(box.vault),
            "--state-dir", str(box.state)]
    for _ in range(3):
        done = run_cli(args, env=isolated_env)
        assert done.returncode == 0, done.stderr
    assert _zips(out) == ["echo-memory-vault-2026-03-01-093000-3.zip"]


def _bad_name(box: VaultBox) -> None:
    (box.vault / "inbox").mkdir(exist_ok=True)
    with open(os.fsencode(box.vault / "inbox") + b"/bad\xffname.md", "wb") as handle:
        handle.write(b"# not UTF-8 in its name\n")


def test_a_file_name_that_is_not_utf8_is_skipped_and_named(tmp_path: Path) -> None:
    box = _box(tmp_path)
    _bad_name(box)
    env = backup_vault(box.ctx(ECHO_NOW=NOW), out=str(tmp_path / "out"))
    assert not env.ok and "incomplete" in env.message  # said, as for a file not readable
    with zipfile.ZipFile(env.data.path) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
    assert ADA in names and not any("bad" in n for n in names)
    [skipped] = env.data.skipped
    assert os.fsencode(skipped.path) == b"inbox/bad\xffname.md"
    assert "UTF-8" in skipped.reason
    assert names[-1] == ".echo-backup-manifest.json" and env.data.files == len(names) - 1


def test_cli_backup_of_a_vault_with_a_non_utf8_file_name_writes_the_rest_and_names_it(
        isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = _box(tmp_path)
    _bad_name(box)
    done = run_cli(["backup", "--out", str(tmp_path / "out"), "--vault", str(box.vault),
                    "--state-dir", str(box.state)], env=isolated_env)
    assert done.returncode == 1, done.stderr  # incomplete, said; the rest is in the zip
    said = done.stdout + done.stderr
    assert "inbox/bad" in said and "name.md" in said
    assert len(_zips(tmp_path / "out")) == 1
