"""lint reports a frontmatter key written twice in one block (readers keep only its last
value, Obsidian calls the block invalid properties); reading the note keeps working."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.yaml_bounded import duplicate_keys
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.lint_kit import ADA, box_like, edit, run


@pytest.fixture
def twice(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> VaultBox:
    """The clean vault with Ada's note holding ``aliases`` on two lines."""
    box = box_like("clean", tmp_path, tmp_path_factory)
    edit(box, ADA, "status: active\n",
         "aliases: [Countess Lovelace]\nstatus: active\naliases: [Ada King]\n")
    return box


def _alias_lines(text: str) -> list[int]:
    return [n for n, line in enumerate(text.split("\n"), 1) if line.startswith("aliases:")]


def test_lint_reports_a_duplicate_key_with_the_note_and_its_lines(twice: VaultBox) -> None:
    lines = _alias_lines(twice.read(ADA))
    assert len(lines) == 2

    result = run(twice, checks=("incomplete-frontmatter",))

    assert [(f.check, f.path) for f in result.findings] == [("incomplete-frontmatter", ADA)]
    problem = result.findings[0].problem
    assert "'aliases' 2 times" in problem and f"lines {lines[0]} and {lines[1]}" in problem
    assert result.findings[0].repair is None  # a person picks the value
    assert twice.frontmatter(ADA)["aliases"] == ["Ada King"]  # reading: last value wins


def test_lint_json_exits_1_on_a_duplicate_key(
        twice: VaultBox, isolated_env: dict[str, str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    done = run_main(["lint", "--json", "--check", "incomplete-frontmatter",
                     "--vault", str(twice.vault), "--state-dir", str(twice.state)],
                    capsys, monkeypatch)
    assert done.code == 1, done
    findings = json.loads(done.out)["findings"]
    assert [(f["path"], "'aliases'" in f["problem"]) for f in findings] == [(ADA, True)]


@pytest.mark.parametrize(("block", "expected"), [
    ("a: 1\nb: 2\n", {}),
    ("a: 1\nb:\n  a: 2\nc: |\n  a: 3\n", {}),  # nested and block-scalar 'a:' are not keys
    ("a: 1\r\nb: 2\r\n'a' : 3\r\n", {"a": (2, 4)}),
    ('x: 1\n"x": 2\nx: 3\n', {"x": (2, 3, 4)}),
    ("a: [1\na: 2\n", {}),  # not valid YAML: the parse error is the finding
])
def test_duplicate_keys_counts_top_level_keys_only(
        block: str, expected: dict[str, tuple[int, ...]]) -> None:
    assert duplicate_keys(block) == expected
