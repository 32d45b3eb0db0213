"""An import says what it did when it cannot finish: a path clash (a file and a folder
of one name, between the folder and the vault) refuses it before any file is written,
on every backend; a write that fails part-way (a full disk, a file size limit) stops it
and says how many files were written and that running it again finishes it, never
"nothing was written"; and the rerun does finish it."""

from __future__ import annotations

import os
import resource
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from echo_core.context import EchoContext, create_context
from echo_core.errors import EchoError, ExitCode
from echo_core.ops import vault_transfer
from echo_core.protocols import BackendUnavailable, VaultNotWritable
from tests.capture_kit import isolated_env
from tests.conftest import CLI, REPO
from tests.postgres_kit import pg_schema_url, postgres_server

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures used by this module


@pytest.fixture(params=["folder", "postgres"])
def ctx(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EchoContext]:
    vault = (str(tmp_path / "vault") if request.param == "folder"
             else request.getfixturevalue("pg_schema_url"))
    made = create_context(vault=vault, state_dir=str(tmp_path / "state"),
                          env=isolated_env(tmp_path / "home"))
    made.vault.storage.create()
    yield made
    close = getattr(made.vault.storage, "close", None)
    if close is not None:
        close()


def _bulk(root: Path, count: int) -> None:
    (root / "bulk").mkdir(parents=True)
    for n in range(count):
        (root / f"bulk/p{n:04d}.md").write_text(f"# P {n}\n\ntokpart{n}\n")


@pytest.mark.parametrize("vault_has", ["file", "folder"])
def test_a_path_clash_refuses_the_import_before_any_write(ctx: EchoContext, tmp_path: Path,
                                                          vault_has: str) -> None:
    storage = ctx.vault.storage
    source = tmp_path / "source"
    _bulk(source, 1200)
    if vault_has == "file":  # the vault's file where the folder has a folder
        storage.write("resources/topic.md", "# Parent file\n")
        (source / "resources/topic.md").mkdir(parents=True)
        (source / "resources/topic.md/child.md").write_text("# Child\n")
    else:  # the vault's folder where the folder has a file
        storage.write("resources/topic.md/child.md", "# Child\n")
        (source / "resources").mkdir()
        (source / "resources/topic.md").write_text("# Parent file\n")
    before = sorted(storage.list(""))
    with pytest.raises(EchoError) as caught:
        vault_transfer.import_vault(ctx, str(source))
    assert caught.value.code == ExitCode.USAGE
    assert "resources/topic.md" in caught.value.message
    assert "nothing was imported" in caught.value.message
    assert sorted(storage.list("")) == before


def test_a_write_failing_part_way_says_how_far_and_a_rerun_finishes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = create_context(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "state"),
                         env=isolated_env(tmp_path / "home"))
    source = tmp_path / "source"
    _bulk(source, 60)
    storage = ctx.vault.storage
    real = storage.write
    calls = {"notes": 0}

    def full_disk(path: str, text: str) -> None:
        if path.startswith("bulk/"):
            calls["notes"] += 1
            if calls["notes"] > 25:
                raise VaultNotWritable(f"vault folder cannot be written (No space left on "
                                       f"device writing {path!r}); free space")
        real(path, text)

    monkeypatch.setattr(storage, "write", full_disk)
    with pytest.raises(EchoError) as caught:
        vault_transfer.import_vault(ctx, str(source))
    assert not isinstance(caught.value, BackendUnavailable)  # not "nothing was written"
    assert caught.value.code == ExitCode.UNAVAILABLE
    assert "25 of 60 files" in caught.value.message
    assert "run the same import again" in caught.value.message
    monkeypatch.setattr(storage, "write", real)
    done = vault_transfer.import_vault(ctx, str(source))
    assert done.ok and (done.data.files, done.data.unchanged) == (35, 25)


def _limited(size: int) -> Any:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return apply


def test_an_attachment_that_cannot_be_written_stops_the_import_not_skipped(
        tmp_path: Path) -> None:
    source = tmp_path / "source"
    _bulk(source, 30)
    (source / "zz").mkdir()
    (source / "zz/big.bin").write_bytes(os.urandom(300_000))
    env = {**os.environ, **isolated_env(tmp_path / "home"),
           "ECHO_VAULT": str(tmp_path / "vault"), "ECHO_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run(CLI + ["import", "--from", str(source)], env=env, cwd=REPO,
                          capture_output=True, text=True, check=False, timeout=120,
                          preexec_fn=_limited(200_000))
    assert done.returncode != 0
    assert "30 of 31 files" in done.stderr and "run the same import again" in done.stderr
    assert "nothing was written" not in done.stderr
    again = subprocess.run(CLI + ["import", "--from", str(source)], env=env, cwd=REPO,
                           capture_output=True, text=True, check=False, timeout=120)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "vault/zz/big.bin").read_bytes() == (source / "zz/big.bin").read_bytes()
