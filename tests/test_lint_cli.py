"""``echo-memory lint`` on the command line: exit codes (0 clean, 1 findings, 2 an
unknown check), the report grouped by check, --json's shape, --fix/--apply, and a
help that teaches the checks within 80 columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.ops.lint.registry import CHECKS
from tests.cli_inproc import CliRun, run_main
from tests.lint_kit import MECHANICAL, PLANTED, box_like


def _lint(box_root: Path, args: list[str], capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> CliRun:
    return run_main(["lint", *args, "--vault", str(box_root / "vault"),
                     "--state-dir", str(box_root / "state")], capsys, monkeypatch)


@pytest.fixture
def planted_root(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
                 isolated_env: dict[str, str]) -> Path:
    return box_like("planted", tmp_path, tmp_path_factory).root


def test_clean_vault_exits_0(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
                             isolated_env: dict[str, str], capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    root = box_like("clean", tmp_path, tmp_path_factory).root
    done = _lint(root, [], capsys, monkeypatch)
    assert done.code == 0, done
    assert done.out.rstrip().endswith("clean")


def test_findings_exit_1_grouped_by_check_with_path_and_fix(
        planted_root: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    done = _lint(planted_root, [], capsys, monkeypatch)
    assert done.code == 1, done
    lines = done.out.splitlines()
    for name, path in PLANTED.items():
        head = next(i for i, line in enumerate(lines) if line.startswith(f"{name}: 1"))
        assert lines[head + 1].startswith(f"  {path}: ")
        assert lines[head + 2].startswith("    fix: ")
    assert "13 findings in 13 checks" in lines[-1]


def test_json_shape(planted_root: Path, capsys: pytest.CaptureFixture[str],
                    monkeypatch: pytest.MonkeyPatch) -> None:
    done = _lint(planted_root, ["--json"], capsys, monkeypatch)
    assert done.code == 1
    data = json.loads(done.out)
    assert data["ok"] is False and data["action"] == "linted"
    assert [c["name"] for c in data["checks"]] == [c.name for c in CHECKS]
    assert {c["name"] for c in data["checks"] if c["mechanical"]} == MECHANICAL
    assert {(f["check"], f["path"]) for f in data["findings"]} == set(PLANTED.items())
    finding = data["findings"][0]
    assert set(finding) == {"check", "path", "problem", "fix", "other", "repair"}
    assert data["scores"] and set(data["scores"][0]) == {
        "path", "score", "frontmatter", "body", "links", "freshness"}


def test_fix_is_a_dry_run_and_apply_mends(planted_root: Path,
                                          capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    done = _lint(planted_root, ["--fix"], capsys, monkeypatch)
    assert done.code == 1 and "repair: add type, status" in done.out
    assert _lint(planted_root, ["--check", "incomplete-frontmatter"], capsys,
                 monkeypatch).code == 1
    done = _lint(planted_root, ["--fix", "--apply"], capsys, monkeypatch)
    assert done.code == 1 and "repaired: 3" in done.out
    for name in MECHANICAL:
        assert _lint(planted_root, ["--check", name], capsys, monkeypatch).code == 0


def test_checks_are_selected_by_name_and_unknown_ones_exit_2(
        planted_root: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    done = _lint(planted_root, ["--check", "orphan-note,stale-scope", "--json"], capsys,
                 monkeypatch)
    assert [c["name"] for c in json.loads(done.out)["checks"]] == ["orphan-note", "stale-scope"]
    done = _lint(planted_root, ["--check", "no-such-check"], capsys, monkeypatch)
    assert done.code == 2 and "orphan-note" in done.err


def test_help_lists_every_check_marks_the_mechanical_and_fits_80_columns(
        isolated_env: dict[str, str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the text's own lines, not click's wrapping
    done = run_main(["lint", "--help"], capsys, monkeypatch)
    assert done.code == 0
    lines = done.out.splitlines()
    for check in CHECKS:
        row = next(line for line in lines if line.split()[:1] == [check.name])
        assert ("--fix repairs it" in row) == check.mechanical
    assert "Exit codes: 0 clean, 1 findings remain, 2 usage" in done.out
    assert all(len(line) <= 80 for line in lines if not line.startswith("  --")), [
        line for line in lines if len(line) > 80]



def test_lint_apply_without_fix_is_a_usage_error_that_names_both(
        planted_root: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``lint --apply`` alone used to run a plain lint (exit 1 on findings) and repair
    nothing, with no word about ``--fix``: now exit 2, nothing written, both named."""
    vault = planted_root / "vault"

    def tree() -> list[tuple[str, bytes]]:
        return sorted((str(p.relative_to(vault)), p.read_bytes())
                      for p in vault.rglob("*") if p.is_file())

    before = tree()
    run = _lint(planted_root, ["--apply"], capsys, monkeypatch)
    assert run.code == 2, run.out + run.err
    assert "--fix" in run.err and "--apply" in run.err
    assert tree() == before
    assert _lint(planted_root, ["--fix", "--apply"], capsys, monkeypatch).code in (0, 1)
    assert tree() != before  # the planted mechanical findings were repaired
