"""A backup checks itself: its last entry is a manifest (every file's path, size and
SHA-256), and ``backup --verify`` checks a zip, or the folder it was unzipped into,
against it, naming every missing, extra or damaged file and exiting non-zero."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from echo_core.ops.backup import backup_vault
from tests.capture_kit import VaultBox
from tests.conftest import run_cli

ADA = "resources/people/ada-lovelace.md"
MANIFEST = ".echo-backup-manifest.json"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Ada Lovelace", kind="person", body="Mathematician " * 50).data.path == ADA
    return box


def _backup(box: VaultBox) -> Path:
    env = backup_vault(box.ctx(), out=str(box.root / "out"))
    assert env.ok, env.message
    return Path(env.data.path)


def _verify(path: Path, *more: str) -> subprocess.CompletedProcess[str]:
    """``backup --verify`` as a person restoring on a new machine runs it: no vault."""
    env = {"HOME": str(path.parent / "home"), "XDG_STATE_HOME": str(path.parent / "xdg")}
    return run_cli(["backup", "--verify", str(path), "--vault",
                    str(path.parent / "no-such-vault"), *more], env=env)


def test_the_last_entry_is_a_manifest_of_every_file(box: VaultBox) -> None:
    with zipfile.ZipFile(_backup(box)) as archive:
        names = archive.namelist()
        assert names[-1] == MANIFEST
        manifest = json.loads(archive.read(MANIFEST))
        listed = {f["path"]: f for f in manifest["files"]}
        assert set(listed) == set(names[:-1]) and ADA in listed
        for name in names[:-1]:
            data = archive.read(name)
            assert listed[name]["size"] == len(data)
            assert listed[name]["sha256"] == hashlib.sha256(data).hexdigest()


def test_verify_passes_a_whole_backup_and_the_folder_it_unzips_into(box: VaultBox) -> None:
    zip_path = _backup(box)
    done = _verify(zip_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "backup is whole" in done.stdout
    if shutil.which("unzip"):
        subprocess.run(["unzip", "-q", str(zip_path), "-d", str(box.root / "r")], check=True)
        done = _verify(box.root / "r")
        assert done.returncode == 0, done.stdout + done.stderr


def _flip_a_bit_of(zip_path: Path, name: str) -> None:
    with zipfile.ZipFile(zip_path) as archive:
        info = archive.getinfo(name)
    data = bytearray(zip_path.read_bytes())
    data[info.header_offset + 30 + len(info.filename.encode()) + len(info.extra) + 3] ^= 0x10
    zip_path.write_bytes(bytes(data))


def test_verify_names_a_flipped_bit_as_damaged(box: VaultBox) -> None:
    zip_path = _backup(box)
    _flip_a_bit_of(zip_path, ADA)
    done = _verify(zip_path)
    assert done.returncode == 1
    assert f"damaged: {ADA}" in done.stdout
    data = json.loads(_verify(zip_path, "--json").stdout)
    assert not data["ok"] and [d["path"] for d in data["damaged"]] == [ADA]


def test_verify_says_a_truncated_zip_is_unreadable(box: VaultBox) -> None:
    zip_path = _backup(box)
    zip_path.write_bytes(zip_path.read_bytes()[: zip_path.stat().st_size // 2])
    done = _verify(zip_path)
    assert done.returncode == 1 and "not a readable zip" in done.stdout


def test_verify_names_missing_and_extra_files_of_an_unzipped_folder(box: VaultBox) -> None:
    zip_path = _backup(box)
    folder = box.root / "r"
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(folder)
    (folder / ADA).unlink()
    (folder / "_agent/echo-vault.md").write_bytes(b"")  # what unzip leaves of a bad entry
    (folder / "stray.md").write_text("x", "utf-8")
    done = _verify(folder)
    assert done.returncode == 1
    for line in (f"missing: {ADA}", "damaged: _agent/echo-vault.md", "extra: stray.md"):
        assert line in done.stdout


def test_verify_of_a_zip_without_a_manifest_fails_and_says_so(box: VaultBox) -> None:
    zip_path = box.root / "plain.zip"
    with zipfile.ZipFile(zip_path, "w") as archive:
        archive.writestr("a.md", "# A\n")
    done = _verify(zip_path)
    assert done.returncode == 1 and "no manifest" in done.stdout


def test_help_says_how_to_restore_and_that_history_is_per_machine() -> None:
    done = run_cli(["backup", "--help"])
    text = " ".join(done.stdout.split())
    assert "--verify" in text and "unzip" in text and "ECHO_VAULT" in text
    assert "import --from" in text and ".echo-history/" in text
