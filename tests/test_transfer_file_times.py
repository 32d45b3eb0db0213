"""A transfer keeps each file's modification time where the target can hold it: a note
imported into a folder vault, or exported into a folder, has the time it had (sweep
reads it for a hand-written note's ``created`` and for decay), not the time of the copy.
From a PostgreSQL vault the export stamps the time the database recorded for the file
(PostgreSQL storage offers no way to set it, so an import into it records the import's
time)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from echo_core.context import EchoContext, create_context
from echo_core.ops import vault_transfer
from echo_core.ops.init import init_vault
from echo_core.vault_scan import file_stamps
from tests.capture_kit import isolated_env
from tests.postgres_kit import pg_schema_url, postgres_server

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures used by this module

OLD_NS = 1_577_934_245_123_456_789  # 2020-01-02, with nanoseconds
HAND = ("resources/people/grace-hopper.md", "attachments/pixel.png", "bulk/n1.md")


def _ctx(vault: str, home: Path) -> EchoContext:
    return create_context(vault=vault, state_dir=str(home / "state"), env=isolated_env(home))


@pytest.fixture
def source(tmp_path: Path) -> Path:
    root = tmp_path / "source"
    init_vault(_ctx(str(root), tmp_path / "home-src"))
    for n, path in enumerate(HAND):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(b"\x89PNG\x00" if path.endswith(".png") else b"# hand\n")
        os.utime(root / path, ns=(OLD_NS, OLD_NS + n))
    return root


def _times(root: Path) -> dict[str, int]:
    return {p: (root / p).stat().st_mtime_ns for p in HAND}


def test_import_into_a_folder_vault_keeps_file_times(source: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    assert vault_transfer.import_vault(_ctx(str(vault), tmp_path / "home"), str(source)).ok
    assert _times(vault) == _times(source)


def test_export_of_a_folder_vault_keeps_file_times(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert vault_transfer.export_vault(_ctx(str(source), tmp_path / "home-src"), str(out)).ok
    assert _times(out) == _times(source)
    forced = tmp_path / "forced"
    forced.mkdir()
    (forced / "mine.txt").write_text("mine\n")
    vault_transfer.export_vault(_ctx(str(source), tmp_path / "home-src"), str(forced),
                                force=True)
    assert _times(forced) == _times(source)


def test_export_of_a_postgres_vault_stamps_the_times_it_recorded(
        source: Path, pg_schema_url: str, tmp_path: Path) -> None:
    ctx = _ctx(pg_schema_url, tmp_path / "home-pg")
    try:
        assert vault_transfer.import_vault(ctx, str(source)).ok
        recorded = {p: s[1] for p, s in file_stamps(ctx.vault.storage, list(HAND)).items()
                    if s is not None}
        out = tmp_path / "out"
        assert vault_transfer.export_vault(ctx, str(out)).ok
        assert _times(out) == recorded
    finally:
        ctx.vault.storage.close()  # type: ignore[attr-defined]
