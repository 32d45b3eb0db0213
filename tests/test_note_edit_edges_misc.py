"""Duplicate headings: ``get --section`` and ``patch --heading`` use the first section of
that name, and say so in a warning (how many, their lines). ``get`` of a folder points to
``ls``. ``capture -b -`` reads the body from stdin, as ``capture TITLE -`` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_inproc import run_main, vault_runner

DUPES = """---
type: concept
---
# D

## Notes
- first

## Log
### Notes
- inner

## Notes
- second
"""


def test_get_section_warns_when_the_note_has_two_of_that_name(
        isolated_env: dict[str, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    (run.vault / "d.md").write_text(DUPES, encoding="utf-8")
    done = run("get", "d.md", "--section", "## Notes")
    assert done.code == 0 and done.out.startswith("## Notes\n- first\n")
    assert ("warning: d.md has 2 sections titled '## Notes' (lines 6, 13); the first "
            "(line 6) was used") in done.err
    data = json.loads(run("get", "d.md", "--section", "Notes", "--json").out)
    assert "3 sections titled 'Notes' (lines 6, 10, 13)" in data["warnings"][0]
    assert "warnings" not in json.loads(run("get", "d.md", "--section", "Log", "--json").out)


def test_patch_heading_warns_and_patches_the_first(
        isolated_env: dict[str, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    note = run.vault / "d.md"
    note.write_text(DUPES, encoding="utf-8")
    done = run("patch", "d.md", "--op", "append", "--heading", "## Notes", "- added")
    assert done.code == 0
    assert "2 sections titled '## Notes' (lines 6, 13); the first (line 6)" in done.err
    assert note.read_text(encoding="utf-8") == DUPES.replace("- first\n", "- first\n- added\n")
    # a dry run says it too; a nested path unique at each step says nothing
    dry = run("patch", "d.md", "--op", "append", "--heading", "Notes", "- x", "--dry-run")
    assert "3 sections titled 'Notes'" in dry.err
    nested = run("patch", "d.md", "--op", "append", "--heading", "Log::Notes", "- y")
    assert nested.code == 0 and "warning" not in nested.err


def test_duplicate_heading_looks_inside_the_parent_for_a_nested_path() -> None:
    from echo_core.ops.duplicate_headings import duplicate_heading

    text = "# T\n## Log\n### 2026\n- a\n### 2026\n- b\n## Other\n### 2026\n"
    assert duplicate_heading("n.md", text, "Log::2026") == (
        "n.md has 2 sections titled '2026' (lines 3, 5); the first (line 3) was used: "
        "rename the others to reach them")
    assert duplicate_heading("n.md", text, "Other::2026") is None
    assert duplicate_heading("n.md", text, "Log") is None
    assert duplicate_heading("n.md", text, "Missing") is None


def test_get_of_a_folder_points_to_ls(
        isolated_env: dict[str, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    (run.vault / "resources/concepts/x.md").write_text("# X\n", encoding="utf-8")
    done = run("get", "resources/concepts")
    assert done.code == 2
    assert "resources/concepts is a folder, not a note" in done.err
    assert "`echo-memory ls resources/concepts`" in done.err
    assert run("get", "resources/concepts/absent.md").code == 44


def test_capture_body_dash_reads_stdin(
        isolated_env: dict[str, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    base = ["--vault", str(run.vault), "--state-dir", str(tmp_path / "state")]
    done = run_main(["capture", *base, "Grace Hopper", "-k", "person", "-b", "-"],
                    capsys, monkeypatch, stdin=b"Wrote the first compiler.\n")
    assert done.code == 0, done
    text = (run.vault / "resources/people/grace-hopper.md").read_text(encoding="utf-8")
    assert "Wrote the first compiler." in text
    assert "\n-\n" not in text
    both = run_main(["capture", *base, "Alan Kay", "-k", "person", "--body", "-", "-"],
                    capsys, monkeypatch, stdin=b"x\n")
    assert both.code == 2 and "not both" in both.err
