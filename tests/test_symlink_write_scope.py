"""A symlink in a folder vault is no way around the write scope or out of the vault.

A link inside the vault to the marker (or the index, or a dot-folder) let ``put``,
``append``, ``fm`` and ``import`` change a file no note write may change; ``import`` wrote
files that are not text straight into the folder, through a linked folder leading outside
the vault, and replaced what it found there without ``--force``. A link to another note
is still written through, as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from plugins.storage_fs.folder_storage import FolderStorage
from tests.conftest import run_cli

MARKER = "_agent/echo-vault.md"


@pytest.fixture
def vault(isolated_env: dict[str, str], tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    assert run_cli(["init", "--vault", str(root)], env=isolated_env).returncode == 0
    return root


def test_writes_through_a_link_to_the_marker_are_refused(vault: Path) -> None:
    marker = (vault / MARKER).read_bytes()
    (vault / "inbox/m.md").symlink_to(vault / MARKER)
    (vault / "hidden").symlink_to(vault / "_agent")
    storage = FolderStorage(vault)
    for write in (lambda: storage.write("inbox/m.md", "pwned\n"),
                  lambda: storage.write_unless_changed("inbox/m.md", "pwned\n",
                                                       marker.decode()),
                  lambda: storage.append_line("inbox/m.md", "pwned"),
                  lambda: storage.delete("inbox/m.md"),
                  lambda: storage.write("hidden/echo-vault.md", "pwned\n")):
        with pytest.raises(EchoError) as refused:
            write()
        assert refused.value.code == ExitCode.USAGE
        assert "symlink" in refused.value.message and MARKER in refused.value.message
    assert (vault / MARKER).read_bytes() == marker
    assert (vault / "inbox/m.md").is_symlink()


def test_a_link_to_another_note_is_still_written_through(vault: Path) -> None:
    storage = FolderStorage(vault)
    storage.write("notes/real.md", "v1\n")
    (vault / "notes/alias.md").symlink_to(vault / "notes/real.md")
    storage.write("notes/alias.md", "v2\n")
    assert storage.read("notes/real.md") == "v2\n"


@pytest.mark.parametrize("verb", [["put", "inbox/m.md", "-"], ["append", "inbox/m.md", "pwned"],
                                  ["fm", "inbox/m.md", "status", '"pwned"']])
def test_note_verbs_refuse_a_link_to_the_marker(vault: Path, isolated_env: dict[str, str],
                                                 verb: list[str]) -> None:
    marker = (vault / MARKER).read_bytes()
    (vault / "inbox/m.md").symlink_to(vault / MARKER)
    out = run_cli([*verb, "--vault", str(vault)], env=isolated_env, stdin=b"pwned\n")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "symlink" in out.stderr
    assert (vault / MARKER).read_bytes() == marker


def test_import_writes_nothing_through_a_linked_folder_leading_outside(
        vault: Path, isolated_env: dict[str, str], tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "existing.dat").write_bytes(b"precious")
    (vault / "resources/att").symlink_to(outside)
    source = tmp_path / "source/resources/att"
    source.mkdir(parents=True)
    (source / "existing.dat").write_bytes(b"\xffPAYLOAD")
    (source / "new.bin").write_bytes(b"\xffNEW")
    (source / "note.md").write_text("# text\n")
    out = run_cli(["import", "--from", str(tmp_path / "source"), "--vault", str(vault),
                   "--json"], env=isolated_env)
    assert sorted(p.name for p in outside.iterdir()) == ["existing.dat"]
    assert (outside / "existing.dat").read_bytes() == b"precious"
    assert out.returncode != 0, out.stdout
    assert "resources/att/new.bin" in out.stdout and "resources/att/existing.dat" in out.stdout


def test_import_skips_a_text_file_whose_path_links_to_the_marker(
        vault: Path, isolated_env: dict[str, str], tmp_path: Path) -> None:
    marker = (vault / MARKER).read_bytes()
    (vault / "inbox/m.md").symlink_to(vault / MARKER)
    source = tmp_path / "source"
    (source / "inbox").mkdir(parents=True)
    (source / "inbox/m.md").write_text("pwned\n")
    (source / "inbox/fine.md").write_text("# fine\n")
    out = run_cli(["import", "--from", str(source), "--vault", str(vault), "--force", "--json"],
                  env=isolated_env)
    assert (vault / MARKER).read_bytes() == marker
    assert (vault / "inbox/fine.md").read_text() == "# fine\n"
    assert "inbox/m.md" in out.stdout and "symlink" in out.stdout
