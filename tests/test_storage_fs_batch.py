"""``FolderStorage.read_many`` reads by folder descriptor, and answers exactly as reading
file by file does: the same texts, the same refusals, in the order asked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from echo_core import EchoError, ExitCode
from plugins.storage_fs import batch_read
from plugins.storage_fs.folder_storage import FolderStorage

pytestmark = pytest.mark.skipif(not batch_read.AVAILABLE, reason="no /proc/self/fd here")


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    for rel, text in {"a/one.md": "1\n", "a/b/two.md": "2\n", "top.md": "t\n",
                      "real/n.md": "inside\n"}.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    (vault / "a" / "linked.md").symlink_to(vault / "top.md")  # a link staying inside
    (vault / "via").symlink_to(vault / "real")  # a linked folder staying inside
    (vault / "a" / "dir.md").mkdir()
    os.mkfifo(vault / "a" / "pipe.md")
    return vault


ASKED = ["a/b/two.md", "top.md", "./a/one.md", "a/linked.md", "via/n.md", "a/none.md",
         "a/dir.md", "a/pipe.md", "gone/x.md", "top.md", "top.md/child.md"]


def test_read_many_by_folder_equals_reading_file_by_file(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    storage = FolderStorage(_vault(tmp_path))
    batched = storage.read_many(ASKED)
    monkeypatch.setattr(batch_read, "AVAILABLE", False)
    one_by_one = storage.read_many(ASKED)
    assert batched == one_by_one
    assert list(batched) == list(dict.fromkeys(ASKED))
    assert batched["a/linked.md"] == "t\n" and batched["via/n.md"] == "inside\n"
    assert batched["a/pipe.md"] is None and batched["a/dir.md"] is None
    assert batched["./a/one.md"] == "1\n" and batched["gone/x.md"] is None


def test_read_many_refuses_a_file_linked_outside_the_vault(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text("secret\n", encoding="utf-8")
    (vault / "a" / "out.md").symlink_to(secret)
    with pytest.raises(EchoError) as caught:
        FolderStorage(vault).read_many(["a/one.md", "a/out.md"])
    assert caught.value.code == ExitCode.USAGE and "outside the vault" in caught.value.message


def test_read_many_refuses_a_folder_linked_outside_the_vault(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("secret\n", encoding="utf-8")
    (vault / "a" / "out").symlink_to(outside)
    with pytest.raises(EchoError) as caught:
        FolderStorage(vault).read_many(["a/one.md", "a/out/x.md"])
    assert caught.value.code == ExitCode.USAGE


def test_read_many_names_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    (vault / "a" / "latin.md").write_bytes(b"caf\xe9\n")
    with pytest.raises(EchoError) as caught:
        FolderStorage(vault).read_many(["a/one.md", "a/latin.md"])
    assert caught.value.code == ExitCode.FAILURE and "a/latin.md" in caught.value.message


def test_read_many_checks_every_path_before_reading_any(tmp_path: Path) -> None:
    with pytest.raises(EchoError) as caught:
        FolderStorage(_vault(tmp_path)).read_many(["a/one.md", "../escape.md"])
    assert caught.value.code == ExitCode.USAGE
