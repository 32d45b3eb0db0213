"""``export --to`` / ``import --from``: folder -> PostgreSQL -> folder and folder -> folder
round trips are byte-identical (10k notes too), a person's folder is never overwritten
silently, conflicts stop an import before it writes, and an export cut short leaves
nothing behind."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from echo_core import invoke
from echo_core.context import EchoContext, create_context
from echo_core.errors import EchoError, ExitCode
from echo_core.models import CaptureRequest
from echo_core.ops import vault_transfer
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.recall import recall
from echo_core.protocols import BackendUnavailable
from tests.capture_kit import isolated_env
from tests.conftest import run_cli
from tests.postgres_kit import pg_schema_url, postgres_server

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures used by this module
BLOB = bytes(range(256)) * 4


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (hidden ones too), path -> bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def visible(files: dict[str, bytes]) -> dict[str, bytes]:
    return {p: d for p, d in files.items()
            if not any(part.startswith(".") for part in p.split("/"))}


def context(vault: str, home: Path) -> EchoContext:
    return create_context(vault=vault, state_dir=str(home / "state"),
                          env=isolated_env(home))


@pytest.fixture
def folder_vault(tmp_path: Path) -> Path:
    """A folder vault with captures, and files a person put there by hand."""
    root = tmp_path / "source"
    ctx = context(str(root), tmp_path / "home-src")
    init_vault(ctx)
    capture(ctx, CaptureRequest(title="Ada Lovelace", kind="person",
                                body="Wrote the first program, for the Analytical Engine."))
    capture(ctx, CaptureRequest(title="call the bank"))
    (root / "notes").mkdir()
    (root / "notes/crlf.md").write_bytes(b"---\r\ntype: concept\r\n---\r\nline\rmixed\nend")
    (root / "notes/Café 東京 🧠.md").write_bytes("# Café\n\nnaïve résumé 🚀\n".encode())
    (root / "attachments").mkdir()
    (root / "attachments/diagram.png").write_bytes(BLOB)
    (root / ".obsidian").mkdir()
    (root / ".obsidian/app.json").write_text("{}")
    (root / "notes/.draft.md").write_text("hidden\n")
    return root


@pytest.fixture
def pg_ctx(pg_schema_url: str, tmp_path: Path) -> Iterator[EchoContext]:
    ctx = context(pg_schema_url, tmp_path / "home-pg")
    yield ctx
    close = getattr(ctx.vault.storage, "close", None)
    if close is not None:
        close()


def test_folder_to_postgres_to_folder_is_byte_identical(
    folder_vault: Path, pg_ctx: EchoContext, tmp_path: Path,
) -> None:
    source = tree(folder_vault)
    imported = vault_transfer.import_vault(pg_ctx, str(folder_vault))
    assert imported.ok, imported.message
    assert imported.data.files == len(visible(source)) and imported.data.skipped == ()
    assert imported.data.indexed > 0
    out = tmp_path / "exported"
    exported = vault_transfer.export_vault(pg_ctx, str(out))
    assert exported.ok, exported.message
    assert tree(out) == visible(source)
    assert not list(tmp_path.glob(".exported.echo-export-*"))
    again = vault_transfer.import_vault(pg_ctx, str(folder_vault))
    assert (again.data.files, again.data.unchanged) == (0, len(visible(source)))


def test_imported_notes_are_indexed_for_recall_and_as_entities(folder_vault: Path,
                                                                pg_ctx: EchoContext) -> None:
    hand = folder_vault / "resources/people/grace-hopper.md"
    hand.write_text("# Grace Hopper\n\nWrote the first compiler.\n")  # no entity yet
    done = vault_transfer.import_vault(pg_ctx, str(folder_vault))
    assert done.data.indexed >= 2
    hits = recall(pg_ctx, "first compiler").data.primary
    assert hits and hits[0].path == "resources/people/grace-hopper.md"
    assert not hits[0].path.startswith("_agent")
    resolved = invoke(pg_ctx, "resolve", {"mention": "grace hopper"})
    assert resolved.ok and "grace-hopper" in json.dumps(resolved.to_dict())


def test_folder_to_folder_round_trip_is_byte_identical(folder_vault: Path,
                                                       tmp_path: Path) -> None:
    target = tmp_path / "copy"
    ctx = context(str(target), tmp_path / "home-copy")
    imported = vault_transfer.import_vault(ctx, str(folder_vault))
    assert imported.ok and tree(target).keys() >= visible(tree(folder_vault)).keys()
    out = tmp_path / "out"
    assert vault_transfer.export_vault(ctx, str(out)).ok
    assert visible(tree(out)) == visible(tree(folder_vault))


def test_ten_thousand_notes_round_trip_byte_identical(pg_ctx: EchoContext,
                                                      tmp_path: Path) -> None:
    root = tmp_path / "big"
    for folder in range(50):
        (root / f"area-{folder:02d}").mkdir(parents=True)
    for n in range(10_000):
        eol = "\r\n" if n % 7 == 0 else "\n"
        text = (f"---{eol}type: note{eol}---{eol}# Note {n} ü{eol}{eol}"
                f"Body of note {n}, about topic {n % 97}.{eol}")
        (root / f"area-{n % 50:02d}/note-{n:05d}.md").write_bytes(text.encode())
    done = vault_transfer.import_vault(pg_ctx, str(root))
    assert done.ok and done.data.files == 10_000
    out = tmp_path / "big-out"
    assert vault_transfer.export_vault(pg_ctx, str(out)).data.files == 10_000
    assert tree(out) == tree(root)


# --- a person's folder is never overwritten silently --------------------------------------


def test_export_into_a_non_empty_folder_is_refused_unless_forced(
    folder_vault: Path, tmp_path: Path,
) -> None:
    ctx = context(str(folder_vault), tmp_path / "home-src")
    target = tmp_path / "mine"
    target.mkdir()
    (target / "my-notes.md").write_text("mine\n")
    (target / "resources/people").mkdir(parents=True)
    (target / "resources/people/ada-lovelace.md").write_text("my own Ada\n")
    with pytest.raises(EchoError) as caught:
        vault_transfer.export_vault(ctx, str(target))
    assert caught.value.code == ExitCode.USAGE and "--force" in caught.value.message
    assert sorted(tree(target)) == ["my-notes.md", "resources/people/ada-lovelace.md"]
    forced = vault_transfer.export_vault(ctx, str(target), force=True)
    assert forced.data.replaced == ("resources/people/ada-lovelace.md",)
    assert (target / "my-notes.md").read_text() == "mine\n"
    assert visible(tree(target)).items() >= visible(tree(folder_vault)).items()
    rerun = vault_transfer.export_vault(ctx, str(target), force=True)
    assert (rerun.data.files, rerun.data.replaced) == (0, ())


@pytest.mark.parametrize("where", ["vault", "inside", "above"])
def test_export_into_the_vault_itself_is_refused(folder_vault: Path, tmp_path: Path,
                                                 where: str) -> None:
    ctx = context(str(folder_vault), tmp_path / "home-src")
    target = {"vault": folder_vault, "inside": folder_vault / "sub",
              "above": folder_vault.parent}[where]
    with pytest.raises(EchoError) as caught:
        vault_transfer.export_vault(ctx, str(target), force=True)
    assert caught.value.code == ExitCode.USAGE


def test_import_conflicts_stop_it_before_any_write_unless_forced(
    folder_vault: Path, pg_ctx: EchoContext,
) -> None:
    storage = pg_ctx.vault.storage
    storage.create()
    storage.write("resources/people/ada-lovelace.md", "the vault's own Ada\n")
    with pytest.raises(EchoError) as caught:
        vault_transfer.import_vault(pg_ctx, str(folder_vault))
    assert caught.value.code == ExitCode.USAGE
    assert "resources/people/ada-lovelace.md" in caught.value.message
    assert storage.list() == ["resources/people/ada-lovelace.md"]
    forced = vault_transfer.import_vault(pg_ctx, str(folder_vault), force=True)
    assert forced.data.replaced == ("resources/people/ada-lovelace.md",)
    assert storage.read("resources/people/ada-lovelace.md").startswith("---")
    path = "resources/people/ada-lovelace.md"
    kept = pg_ctx.history.versions(path)
    assert any("the vault's own Ada" in pg_ctx.history.text(path, v) for v in kept)


def test_import_into_a_vault_keeps_its_marker_and_index_even_forced(
    folder_vault: Path, tmp_path: Path,
) -> None:
    """A folder whose marker claims another schema, with a junk entity index: forced in,
    the notes land and the vault keeps its own marker and index (only init and sweep
    write those), so it still works; a new vault takes the folder's as they are."""
    (folder_vault / "_agent/echo-vault.md").write_text("---\ntype: marker\nschema_version: 999\n---\n")
    (folder_vault / "_agent/index/entities.json").write_text("junk")
    target = tmp_path / "target"
    ctx = context(str(target), tmp_path / "home-target")
    init_vault(ctx)
    capture(ctx, CaptureRequest(title="Grace Hopper", kind="person", body="First compiler."))
    own = {p: (target / p).read_bytes() for p in ("_agent/echo-vault.md",
                                                   "_agent/index/entities.json")}
    done = vault_transfer.import_vault(ctx, str(folder_vault), force=True)
    assert done.ok, done.message
    assert set(own) <= set(done.data.kept_own) and "kept the vault's own" in done.message
    assert {p: (target / p).read_bytes() for p in own} == own
    assert (target / "resources/people/ada-lovelace.md").is_file()
    assert invoke(ctx, "resolve", {"mention": "grace hopper"}).ok
    assert invoke(ctx, "sweep", {"apply": True}).ok
    fresh = tmp_path / "fresh"
    (folder_vault / "_agent/index/entities.json").unlink()
    vault_transfer.import_vault(context(str(fresh), tmp_path / "home-fresh"), str(folder_vault))
    assert (fresh / "_agent/echo-vault.md").read_text().count("999") == 1


def test_an_export_cut_short_leaves_nothing(folder_vault: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = context(str(folder_vault), tmp_path / "home-src")
    calls = {"n": 0}
    real = vault_transfer.read_vault

    def failing(*args: Any) -> dict[str, bytes]:
        calls["n"] += 1
        if calls["n"] > 1:
            raise BackendUnavailable("the backend went away")
        return real(*args)

    monkeypatch.setattr(vault_transfer, "batches", lambda items: (
        items[i:i + 5] for i in range(0, len(items), 5)))
    monkeypatch.setattr(vault_transfer, "read_vault", failing)
    with pytest.raises(BackendUnavailable):
        vault_transfer.export_vault(ctx, str(tmp_path / "never"))
    assert not (tmp_path / "never").exists()
    assert not [p for p in os.listdir(tmp_path) if "echo-export" in p]


# --- the command line ---------------------------------------------------------------------


def test_cli_export_and_import_with_a_postgres_vault(folder_vault: Path, pg_schema_url: str,
                                                     tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home-cli", ECHO_VAULT=pg_schema_url,
                       ECHO_STATE_DIR=str(tmp_path / "cli-state"))
    done = run_cli(["import", "--from", str(folder_vault), "--json"], env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["action"] == "imported" and data["files"] == len(visible(tree(folder_vault)))
    again = run_cli(["import", "--from", str(folder_vault)], env=env)
    assert again.returncode == 0 and "already there unchanged" in again.stdout
    out = tmp_path / "cli-out"
    done = run_cli(["export", "--to", str(out)], env=env)
    assert done.returncode == 0, done.stderr
    assert "exported" in done.stdout and visible(tree(out)) == visible(tree(folder_vault))
    refused = run_cli(["export", "--to", str(out)], env=env)
    assert refused.returncode == int(ExitCode.USAGE) and "--force" in refused.stderr
