"""``get`` of a whole note, piped, prints the note's bytes and nothing else (no newline
added to a note without one); a section, a cut note, ``--json`` and a terminal keep the
line output every other command has."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli_inproc import vault_runner
from tests.conftest import CLI, REPO, run_cli

NOTE = b"---\ntype: concept\n---\n# N\r\n\ntab\there\n## Part\nends without newline"


def get_piped(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """``echo-memory get ...`` in a fresh process, stdout a pipe, output as bytes."""
    return subprocess.run([*CLI, "get", *args], check=False, capture_output=True, cwd=REPO,
                          timeout=60, env={**os.environ, **env})


@pytest.fixture
def vault(tmp_path: Path, isolated_env: dict[str, str]) -> Path:
    root = tmp_path / "vault"
    assert run_cli(["init", "--vault", str(root)], env=isolated_env).returncode == 0
    (root / "notes").mkdir()
    (root / "notes/n.md").write_bytes(NOTE)
    (root / "notes/lf.md").write_bytes(b"# L\n\nline\n")
    return root


@pytest.mark.parametrize("name", ["n.md", "lf.md"])
def test_get_of_a_whole_note_piped_prints_its_exact_bytes(
        vault: Path, isolated_env: dict[str, str], name: str) -> None:
    out = get_piped([f"notes/{name}", "--vault", str(vault)], isolated_env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == (vault / "notes" / name).read_bytes()


def test_get_of_a_section_a_cut_note_or_json_keeps_line_output(
        vault: Path, isolated_env: dict[str, str]) -> None:
    where = ["--vault", str(vault)]
    section = get_piped(["notes/n.md", "--section", "Part", *where], isolated_env)
    assert section.stdout == b"## Part\nends without newline\n"
    cut = get_piped(["notes/n.md", "--max-chars", "10", *where], isolated_env)
    assert cut.stdout.endswith(b"(truncated)\n")
    as_json = get_piped(["notes/n.md", "--json", *where], isolated_env)
    assert as_json.stdout.endswith(b"}\n")


def test_get_on_a_terminal_ends_the_note_with_a_newline(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    run: Any = vault_runner(tmp_path, capsys, monkeypatch)
    (run.vault / "n.md").write_bytes(b"# N\n\nends without newline")
    monkeypatch.setattr("plugins.transport_cli.emit.stdout_is_terminal", lambda: True)
    shown = run("get", "n.md")
    assert shown.code == 0 and shown.out == "# N\n\nends without newline\n"
