"""``reflect --transcript PATH`` (issue 17 items 1-2): one Claude Code transcript mined
(``transcript_mining.mine_file``) and its proposals reflected: previewed with why and
the words they came from, applied on request, a second apply changes nothing; a bad
path is exit 2 and a hostile file never crashes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun, run_main

SESSION = "5b1e0c1e-4f7a-4d0e-9a51-3c2f6f0e9a11"


def _line(kind: str, uuid: str, parent: str | None, content: Any, **extra: Any) -> str:
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent,
                       "sessionId": SESSION, "cwd": "/home/ada/src/app",
                       "timestamp": "2026-02-27T10:00:00Z", "isSidechain": False,
                       "message": {"role": kind, "content": content}, **extra})


def transcript(path: Path) -> Path:
    """A short session: a stated preference, an agent answer, a correction, an idea,
    an unknown line type and a truncated last line."""
    lines = [
        json.dumps({"type": "summary", "summary": "Test setup", "leafUuid": "u0"}),
        _line("user", "u1", None, "Always use pytest, never unittest."),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "I'll write unittest cases."}]),
        _line("user", "u2", "a1", "No, use pytest fixtures instead of setUp methods."),
        _line("assistant", "a2", "u2", [{"type": "text", "text": "Done."}]),
        _line("user", "u3", "a2", "It would be nice to add property tests later."),
        json.dumps({"type": "file-history-snapshot", "snapshot": {}}),
        '{"type": "user", "uuid": "u4", "message": {"role": "user", "content": "Alw',
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def run(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        *args: str) -> CliRun:
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    return run_main(["reflect", "--vault", str(box.vault), "--state-dir", str(box.state),
                     *args], capsys, monkeypatch)


def test_reflect_transcript_previews_mined_proposals_with_why_then_applies_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    path = str(transcript(tmp_path / f"{SESSION}.jsonl"))
    before = box.tree_digest()
    preview = run(box, capsys, monkeypatch, "--transcript", path, "--json")
    assert preview.code == 0, preview.err
    items = json.loads(preview.out)["items"]
    assert box.tree_digest() == before
    by_category = {i["origin"]["category"]: i for i in items}
    assert {"preference", "idea"} <= set(by_category)
    preference = next(i for i in items if i["title"] == "Always use pytest, never unittest")
    assert (preference["band"], preference["route"], preference["classification"]) == (
        "high", "semantic", "create")
    assert preference["origin"]["sessions"] == [SESSION]
    assert any("Always use pytest" in e for e in preference["origin"]["excerpts"])
    assert preference["origin"]["rationale"]
    assert (by_category["idea"]["route"], by_category["idea"]["classification"]) == (
        "inbox", "inbox")
    prose = run(box, capsys, monkeypatch, "--transcript", path)
    assert "why: " in prose.out and "> Always use pytest" in prose.out

    applied = run(box, capsys, monkeypatch, "--transcript", path, "--apply", "--json")
    assert applied.code == 0, applied.err
    outcomes = {(i["origin"]["category"], i["classification"])
                for i in json.loads(applied.out)["items"]}
    assert outcomes == {("preference", "created"), ("idea", "inbox")}
    semantic = [p for p in box.files() if p.startswith("_agent/memory/semantic/")
                and not p.endswith("operator-preferences.md")]
    assert semantic, box.files()
    assert "property tests" in box.read("inbox/captures/inbox.md")
    after = box.tree_digest()
    again = run(box, capsys, monkeypatch, "--transcript", path, "--apply", "--json")
    assert {i["classification"] for i in json.loads(again.out)["items"]} == {"unchanged"}
    assert box.tree_digest() == after


@pytest.mark.parametrize("name", ["missing.jsonl", "."])
def test_reflect_transcript_that_is_not_a_file_exits_2_naming_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        name: str) -> None:
    box = VaultBox(tmp_path).init()
    before = box.tree_digest()
    result = run(box, capsys, monkeypatch, "--transcript", str(tmp_path / name), "--apply")
    assert result.code == 2
    assert "transcript:" in result.err
    assert box.tree_digest() == before


def test_reflect_hostile_transcript_never_crashes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_bytes(b"\xff\xfe\x00garbage\n[1,2,3]\nnull\n{\"type\": 7}\n"
                        b'{"type": "user", "message": {"content": [{"type": 9}]}}\n'
                        + b"x" * 100_000 + b"\n")
    before = box.tree_digest()
    result = run(box, capsys, monkeypatch, "--transcript", str(hostile), "--apply")
    assert result.code == 0, result.err
    assert "No proposals: nothing to do." in result.out
    assert box.tree_digest() == before


@pytest.mark.parametrize("data", [bytes(range(256)) * 12, b"# A note\n\nNot a transcript.\n"],
                         ids=["binary", "markdown"])
def test_reflect_a_file_that_is_not_a_transcript_exits_2_saying_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        data: bytes) -> None:
    box = VaultBox(tmp_path).init()
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(data)
    before = box.tree_digest()
    result = run(box, capsys, monkeypatch, "--transcript", str(odd), "--apply")
    assert result.code == 2, result.out
    assert "is not a Claude Code transcript" in result.err
    assert box.tree_digest() == before


def test_reflect_an_empty_transcript_has_no_proposals(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    empty = tmp_path / "new-session.jsonl"
    empty.write_bytes(b"")
    result = run(box, capsys, monkeypatch, "--transcript", str(empty))
    assert result.code == 0 and "No proposals: nothing to do." in result.out
