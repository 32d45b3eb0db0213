"""``ls`` prints one line per file: a line break, ESC or bidi control inside a name a
person made by hand is shown as an escape, so a name cannot pose as two files or drive
the terminal; ``--json`` keeps the exact names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_inproc import vault_runner

ODD = {"notes/a\nb.md": "notes/a\\x0ab.md", "notes/esc\x1b[31m.md": "notes/esc\\x1b[31m.md",
       "notes/\u202egnp.md": "notes/\\u202egnp.md"}


def test_ls_shows_each_odd_name_on_one_line_escaped(
        isolated_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    (run.vault / "notes").mkdir()
    for name in [*ODD, "notes/plain.md"]:
        (run.vault / name).write_text("hand made\n", "utf-8")
    listed = run("ls", "notes")
    assert listed.code == 0, listed.err
    lines = listed.out.splitlines()
    assert sorted(lines) == sorted([*ODD.values(), "notes/plain.md"]), lines
    exact = json.loads(run("ls", "notes", "--json").out)["paths"]
    assert sorted(exact) == sorted([*ODD, "notes/plain.md"])
