"""backup keeps each file's modification time: in the entry's zip date (local time, two
seconds' resolution, 1980 at the earliest) and, exact to the second, in the extended
timestamp field (0x5455) that ``unzip`` restores; so a vault restored by unzipping
keeps the file times sweep reads (a hand-written note's ``created``, decay)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import struct
import subprocess
import zipfile
from pathlib import Path

import pytest

from echo_core.ops.backup import backup_vault
from tests.capture_kit import VaultBox

NOTE = "projects/active/old-hand-project.md"
OLD = dt.datetime(2025, 6, 1, 12, 34, 57).timestamp()  # an odd second, local time
ANCIENT = dt.datetime(1975, 5, 5, 5, 5, 5).timestamp()  # before the zip format's 1980


def _box(root: Path) -> VaultBox:
    box = VaultBox(root).init()
    note = box.vault / NOTE
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("# Old hand project\n\nNo frontmatter dates.\n", "utf-8")
    os.utime(note, (OLD, OLD))
    return box


def _unix_time(extra: bytes) -> int | None:
    """The modification time in an entry's extended timestamp field, if it has one."""
    at = 0
    while at + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, at)
        if tag == 0x5455 and size >= 5 and extra[at + 4] & 1:
            return int(struct.unpack_from("<i", extra, at + 5)[0])
        at += 4 + size
    return None


def test_each_entry_carries_its_files_mtime(tmp_path: Path) -> None:
    box = _box(tmp_path)
    env = backup_vault(box.ctx(), out=str(tmp_path / "out"))
    with zipfile.ZipFile(env.data.path) as archive:
        info = archive.getinfo(NOTE)
    assert info.date_time == (2025, 6, 1, 12, 34, 56)  # the zip date: even seconds
    assert _unix_time(info.extra) == int(OLD)  # exact


def test_a_file_older_than_1980_gets_the_zip_floor_and_its_exact_time(tmp_path: Path) -> None:
    box = _box(tmp_path)
    os.utime(box.vault / NOTE, (ANCIENT, ANCIENT))
    env = backup_vault(box.ctx(), out=str(tmp_path / "out"))
    assert env.ok
    with zipfile.ZipFile(env.data.path) as archive:
        info = archive.getinfo(NOTE)
    assert info.date_time == (1980, 1, 1, 0, 0, 0)
    assert _unix_time(info.extra) == int(ANCIENT)


@pytest.mark.skipif(shutil.which("unzip") is None, reason="needs the unzip command")
def test_unzip_of_a_backup_restores_every_files_mtime(tmp_path: Path) -> None:
    box = _box(tmp_path)
    (box.vault / "attachments").mkdir()
    image = box.vault / "attachments/diagram.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n")
    os.utime(image, (OLD - 86400 * 300 + 1, OLD - 86400 * 300 + 1))
    env = backup_vault(box.ctx(), out=str(tmp_path / "out"))
    restored = tmp_path / "restored"
    subprocess.run(["unzip", "-q", env.data.path, "-d", str(restored)], check=True)
    for rel in (NOTE, "attachments/diagram.png", "_agent/echo-vault.md"):
        assert int((restored / rel).stat().st_mtime) == int((box.vault / rel).stat().st_mtime), rel
