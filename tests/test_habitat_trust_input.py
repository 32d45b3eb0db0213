"""What the habitat CLI says about odd input: an empty batch records nothing (exit 2, as
other empty input), a batch's parse error names the file's line, a session without
prompts says so when flagged by number, and counts read as English ("1 learning")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plugins.habitat.paths import loom_dir
from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun
from tests.test_habitat_trust_redaction import cli as ok_cli


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path / "box").init()


def cli(box: VaultBox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        *args: str, stdin: bytes = b"") -> CliRun:
    """As ``ok_cli``, without asserting success."""
    from tests.cli_inproc import run_main

    ok_cli(box, monkeypatch, capsys, "habitat", "status")  # sets the environment up
    return run_main(list(args), capsys, monkeypatch, stdin=stdin)


def loom_lines(box: VaultBox) -> list[str]:
    return [line for day in loom_dir(box.ctx()).glob("*.jsonl")
            for line in day.read_text().splitlines()]


@pytest.mark.parametrize("batch", [b"[]", b"\n", b"", b"  \n\n"])
def test_an_empty_batch_records_nothing(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str], batch: bytes) -> None:
    done = cli(box, monkeypatch, capsys, "habitat", "record", "--session", "s", "--file", "-",
               stdin=batch)
    assert done.code == 2 and "no records" in done.err, done
    assert loom_lines(box) == []


def test_a_batch_file_with_an_empty_array_records_nothing(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    empty = tmp_path / "e.json"
    empty.write_text("[]")
    done = cli(box, monkeypatch, capsys, "habitat", "record", "--session", "s", "--file",
               str(empty))
    assert done.code == 2 and "no records" in done.err
    assert loom_lines(box) == []


def test_a_parse_error_names_the_line_of_the_file(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    lines = b'{"text": "a"}\n\n{"text": b}\n{"text": "c"}\n'
    done = cli(box, monkeypatch, capsys, "habitat", "record", "--session", "s", "--file", "-",
               stdin=lines)
    assert done.code == 2 and "line 3 column 10" in done.err, done.err
    assert "line 1" not in done.err
    assert loom_lines(box) == []


def test_flagging_by_number_a_session_without_prompts_says_so(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    ok_cli(box, monkeypatch, capsys, "habitat", "record", "--session", "quiet", "a note")
    done = cli(box, monkeypatch, capsys, "habitat", "flag", "quiet", "1")
    assert done.code == 44
    assert "no prompt" in done.err and "1..0" not in done.err, done.err
    ok_cli(box, monkeypatch, capsys, "habitat", "record", "--session", "quiet", "--kind",
           "prompt", "go")
    done = cli(box, monkeypatch, capsys, "habitat", "flag", "quiet", "2")
    assert done.code == 44 and "has 1 prompt(s); give 1..1" in done.err, done.err


def test_counts_of_one_are_singular(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    learned = json.loads(ok_cli(box, monkeypatch, capsys, "habitat", "learn",
                                "Pin numpy below 2 for the legacy stack", "--json").out)
    listed = ok_cli(box, monkeypatch, capsys, "habitat", "learnings")
    assert listed.out.rstrip().endswith("\n1 learning"), listed.out
    ok_cli(box, monkeypatch, capsys, "habitat", "approve", learned["learning"]["id"])
    approved = ok_cli(box, monkeypatch, capsys, "habitat", "learnings", "-s", "approved")
    assert approved.out.rstrip().endswith("\n1 approved learning"), approved.out
    insights = ok_cli(box, monkeypatch, capsys, "habitat", "insights", "--prompt",
                      "numpy legacy stack")
    assert "\n1 insight (" in insights.out, insights.out
    ok_cli(box, monkeypatch, capsys, "habitat", "record", "--session", "one", "only note")
    folded = ok_cli(box, monkeypatch, capsys, "habitat", "fold", "one")
    assert folded.out.startswith("folded 1 record of session one"), folded.out
    assert "Fold of 1 record of session one" in folded.out and ": 1 note." in folded.out
    again = ok_cli(box, monkeypatch, capsys, "habitat", "fold", "one")
    assert "1 record folded already" in again.out, again.out
    for kind in ("reply", "reply"):
        ok_cli(box, monkeypatch, capsys, "habitat", "record", "--session", "two", "--kind",
               kind, "done")
    two = ok_cli(box, monkeypatch, capsys, "habitat", "fold", "two")
    assert "Fold of 2 records of session two" in two.out and ": 2 replies." in two.out
