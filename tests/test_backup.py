"""backup (SPEC §5.6): a dated zip of every vault file (attachments too), byte-identical,
read through the storage; hidden files left out; rotation keeps the newest N and touches
nothing else."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.backup import backup_vault, vault_name
from tests.capture_kit import VaultBox
from tests.conftest import run_cli


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    box.capture("Ada Lovelace", kind="person", body="Mathematician")
    (box.vault / "notes").mkdir()
    (box.vault / "notes/crlf.md").write_bytes(b"# CRLF\r\n\r\nkept \xc3\xa9xactly\r\nno eol")
    (box.vault / ".obsidian").mkdir()
    (box.vault / ".obsidian/app.json").write_text("{}", "utf-8")
    (box.vault / "notes/.hidden.md").write_text("secret", "utf-8")
    return box


def _vault_files(box: VaultBox) -> dict[str, bytes]:
    return {p.relative_to(box.vault).as_posix(): p.read_bytes()
            for p in box.vault.rglob("*") if p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(box.vault).parts)}


def test_backup_zip_holds_every_vault_file_byte_identical(box: VaultBox) -> None:
    env = backup_vault(box.ctx(ECHO_NOW="2026-03-01T09:30:05"))
    assert env.ok and env.action == "backed-up"
    target = Path(env.data.path)
    assert target.name == "echo-memory-vault-2026-03-01-093005.zip"
    assert target.parent == box.ctx().state_dir / "backups"
    expected = _vault_files(box)
    with zipfile.ZipFile(target) as archive:
        assert archive.testzip() is None
        got = {name: archive.read(name) for name in archive.namelist()
               if name != ".echo-backup-manifest.json"  # the backup's own, checked elsewhere
               and not name.startswith(".echo-history/")}
    assert got == expected and "notes/crlf.md" in got
    assert env.data.files == len(expected) and env.data.bytes == sum(map(len, expected.values()))
    assert env.data.skipped == () and not any(name.startswith(".") or "/." in name for name in got)


def test_a_file_that_is_not_utf8_goes_in_as_its_bytes(box: VaultBox) -> None:
    (box.vault / "notes/image.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    env = backup_vault(box.ctx(), out=str(box.root / "out"))
    assert env.ok and env.data.skipped == ()
    with zipfile.ZipFile(env.data.path) as archive:
        assert archive.read("notes/image.png") == b"\x89PNG\r\n\x1a\n\xff\xfe"


def test_rotation_keeps_the_newest_n_and_nothing_else_is_touched(box: VaultBox) -> None:
    out = box.root / "out"
    out.mkdir()
    (out / "unrelated.zip").write_bytes(b"x")
    (out / "echo-memory-other-2026-01-01-000000.zip").write_bytes(b"x")
    names = []
    for minute in range(5):
        env = backup_vault(box.ctx(ECHO_NOW=f"2026-03-01T10:0{minute}:00"), keep=3, out=str(out))
        names.append(Path(env.data.path).name)
    assert env.data.removed == (names[1],)
    left = sorted(p.name for p in out.iterdir())
    assert left == sorted([*names[2:], "unrelated.zip", "echo-memory-other-2026-01-01-000000.zip"])


def test_backups_in_the_same_second_get_a_suffix_and_rotate_in_order(box: VaultBox) -> None:
    out = box.root / "out"
    paths = [Path(backup_vault(box.ctx(), keep=2, out=str(out)).data.path).name
             for _ in range(3)]
    assert paths == ["echo-memory-vault-2026-03-01-120000.zip",
                     "echo-memory-vault-2026-03-01-120000-2.zip",
                     "echo-memory-vault-2026-03-01-120000-3.zip"]
    assert sorted(p.name for p in out.iterdir()) == paths[1:]


def test_keep_below_one_is_a_usage_error(box: VaultBox) -> None:
    with pytest.raises(EchoError) as info:
        backup_vault(box.ctx(), keep=0)
    assert info.value.code == ExitCode.USAGE


@pytest.mark.parametrize(("vault", "name"), [
    ("/home/me/notes", "notes"), ("/home/me/My Vault/", "My-Vault"),
    ("obsidian+https://127.0.0.1:27124", "127.0.0.1-27124"), ("file:///srv/v", "v"), ("/", "vault"),
])
def test_vault_names_are_file_name_safe(vault: str, name: str) -> None:
    assert vault_name(vault) == name


def test_cli_backup(isolated_env: dict[str, str], box: VaultBox) -> None:
    out_dir = box.root / "cli-out"
    base = ["--vault", str(box.vault), "--state-dir", str(box.root / "state")]
    for _ in range(3):
        done = run_cli(["backup", "--keep", "2", "--out", str(out_dir), *base], env=isolated_env)
        assert done.returncode == 0, done.stderr
    assert "backed up" in done.stdout and "removed 1 older backup(s)" in done.stdout
    assert len(list(out_dir.iterdir())) == 2
    data = json.loads(run_cli(["backup", "--json", *base], env=isolated_env).stdout)
    assert data["ok"] and data["files"] == len(_vault_files(box))
    assert Path(data["path"]).name == "echo-memory-vault-2026-03-01-093000.zip"
    bad = run_cli(["backup", "--keep", "0", *base], env=isolated_env)
    assert bad.returncode == 2
