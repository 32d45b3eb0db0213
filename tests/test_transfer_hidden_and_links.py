"""What a transfer leaves out is said: ``import`` names the hidden entries it left out
(a hidden folder such as ``.obsidian/`` once, not its files; echo-memory's own lock and
temp files not at all) without failing for them, and both routes skip a symbolic link
in the vault or the folder and list it (export used to copy a linked note as a second
copy of it)."""

from __future__ import annotations

import os
from pathlib import Path

from echo_core.context import EchoContext, create_context
from echo_core.ops import vault_transfer
from echo_core.ops.init import init_vault
from tests.capture_kit import isolated_env
from tests.conftest import run_cli


def _ctx(vault: Path, home: Path) -> EchoContext:
    return create_context(vault=str(vault), state_dir=str(home / "state"),
                          env=isolated_env(home))


def _source(tmp_path: Path) -> Path:
    root = tmp_path / "source"
    init_vault(_ctx(root, tmp_path / "home-src"))
    (root / "resources/people").mkdir(parents=True, exist_ok=True)
    (root / "resources/people/grace.md").write_text("# Grace\n")
    (root / "resources/link.md").symlink_to("people/grace.md")
    (root / "linkdir").symlink_to("resources/people")
    (root / ".obsidian/plugins/x").mkdir(parents=True)
    for n in range(30):
        (root / f".obsidian/plugins/x/f{n}.json").write_text("{}")
    (root / "notes").mkdir()
    (root / "notes/.draft.md").write_text("hidden\n")
    (root / "_agent/.lock").write_text("")  # the vault's own lock file
    return root


def test_import_names_hidden_entries_once_and_lists_links_as_skipped(tmp_path: Path) -> None:
    source = _source(tmp_path)
    done = vault_transfer.import_vault(_ctx(tmp_path / "vault", tmp_path / "home"),
                                       str(source))
    assert done.data.hidden == (".obsidian/", "notes/.draft.md")
    assert [s.path for s in done.data.skipped] == ["linkdir", "resources/link.md"]
    assert "left out 2 hidden" in done.message
    shown = run_cli(["import", "--from", str(source), "--vault", str(tmp_path / "v2"),
                     "--state-dir", str(tmp_path / "s2")], env=isolated_env(tmp_path / "h2"))
    assert ".obsidian/" in shown.stdout and "notes/.draft.md" in shown.stdout


def test_export_skips_a_symlink_in_the_vault_and_lists_it_as_import_does(
        tmp_path: Path) -> None:
    source = _source(tmp_path)
    out = tmp_path / "out"
    done = vault_transfer.export_vault(_ctx(source, tmp_path / "home-src"), str(out))
    assert [s.path for s in done.data.skipped] == ["linkdir", "resources/link.md"]
    assert all("symbolic link" in s.reason for s in done.data.skipped)
    assert not os.path.lexists(out / "resources/link.md")
    assert not os.path.lexists(out / "linkdir")
    assert (out / "resources/people/grace.md").read_text() == "# Grace\n"
