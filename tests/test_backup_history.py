"""backup carries the vault's note history (the versions ``history`` lists, kept per
machine in the state dir) under ``.echo-history/`` in the zip, file for file, so copying
that folder into a new machine's state dir brings the versions back; ``--no-history``
leaves it out and the backup says the history is not in it."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from echo_core.ops.backup import backup_vault
from echo_core.ops.history import note_history
from tests.capture_kit import VaultBox
from tests.conftest import run_cli

NOTE = "notes/plan.md"


def _box(root: Path) -> VaultBox:
    box = VaultBox(root).init()
    ctx = box.ctx()
    ctx.vault.write_note(NOTE, "# Plan\n\nfirst\n")
    ctx.vault.write_note(NOTE, "# Plan\n\nsecond\n")
    ctx.vault.write_note(NOTE, "# Plan\n\nthird\n")
    return box


def _history_files(box: VaultBox) -> dict[str, bytes]:
    root = box.ctx().state_dir / "history"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".staging" not in p.relative_to(root).parts}


def test_the_zip_holds_the_note_history_under_echo_history(tmp_path: Path) -> None:
    box = _box(tmp_path)
    env = backup_vault(box.ctx(), out=str(tmp_path / "out"))
    assert env.ok
    with zipfile.ZipFile(env.data.path) as archive:
        got = {n[len(".echo-history/"):]: archive.read(n) for n in archive.namelist()
               if n.startswith(".echo-history/")}
    assert got == _history_files(box) and len(got) >= 3
    assert env.data.history_files == len(got)
    assert "note history" in env.message


def test_history_copied_from_a_backup_lists_the_versions_on_a_new_machine(
        tmp_path: Path) -> None:
    box = _box(tmp_path / "old")
    env = backup_vault(box.ctx(), out=str(tmp_path / "out"))
    new = VaultBox(tmp_path / "new")
    with zipfile.ZipFile(env.data.path) as archive:
        archive.extractall(new.vault)
    shutil.copytree(new.vault / ".echo-history", new.ctx().state_dir / "history")
    versions = note_history(new.ctx(), NOTE).data.versions
    assert [v.headline for v in versions] and len(versions) == 2


def test_no_history_leaves_it_out_and_says_it_is_per_machine(tmp_path: Path) -> None:
    box = _box(tmp_path)
    env = backup_vault(box.ctx(), out=str(tmp_path / "out"), history=False)
    with zipfile.ZipFile(env.data.path) as archive:
        assert not any(n.startswith(".echo-history/") for n in archive.namelist())
    assert env.data.history_files == 0
    assert "note history" in env.message and "not in the backup" in env.message


def test_cli_backup_no_history(tmp_path: Path) -> None:
    box = _box(tmp_path)
    done = run_cli(["backup", "--no-history", "--out", str(tmp_path / "out"),
                    "--vault", str(box.vault), "--state-dir", str(box.state)], env=box.env())
    assert done.returncode == 0, done.stderr
    assert "not in the backup" in done.stdout
