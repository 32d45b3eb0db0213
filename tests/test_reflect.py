"""``reflect`` on the CLI (SPEC §4.4, issue 17 item 1): proposals validated before any
write, classified by a dry-run capture, previewed without a write, applied through
capture on request with gate and contradiction stops reported as data, confidence
routing, and a second apply that changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.capture_kit import TODAY, VaultBox
from tests.cli_inproc import CliRun, run_main

PYTEST = {"title": "Use pytest, not unittest", "kind": "semantic",
          "body": "The operator prefers pytest.", "confidence": 0.9}
MEDIUM = {"title": "Deploys go through the staging branch", "kind": "semantic",
          "body": "Merge to staging first; main only after the smoke test.",
          "confidence": 0.7, "tags": ["deploy"]}
LOW = {"title": "Try a faster linter", "body": "Idea from the review.\nMaybe ruff.",
       "confidence": 0.4}
TYPO = {"title": "Ada Lovelase", "kind": "person", "body": "Met at the demo.",
        "confidence": 0.9}
ADA = {"title": "Ada Lovelace", "kind": "person", "body": "Asked about the engine.",
       "confidence": 0.8}


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Ada Lovelace", kind="person", body="Wrote the first program.").ok
    return box


def reflect(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
            *args: str, stdin: bytes = b"", today: str = TODAY) -> CliRun:
    for key, value in box.env(ECHO_TODAY=today).items():
        monkeypatch.setenv(key, value)
    return run_main(["reflect", "--vault", str(box.vault), "--state-dir", str(box.state),
                     *args], capsys, monkeypatch, stdin=stdin)


def write(tmp_path: Path, proposals: Any, name: str = "proposals.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(proposals), encoding="utf-8")
    return str(path)


def items(run: CliRun) -> list[dict[str, Any]]:
    assert run.code == 0, run.err
    found: list[dict[str, Any]] = json.loads(run.out)["items"]
    return found


def test_reflect_preview_classifies_each_proposal_and_writes_nothing(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = box.tree_digest()
    run = reflect(box, capsys, monkeypatch, write(tmp_path, [PYTEST, MEDIUM, LOW, TYPO, ADA]),
                  "--json")
    got = [(i["classification"], i["band"], i["route"]) for i in items(run)]
    assert got == [("create", "high", "semantic"), ("create", "medium", "semantic"),
                   ("inbox", "low", "inbox"), ("gated", "high", "person"),
                   ("update", "medium", "person")]
    assert items(run)[3]["candidates"][0]["slug"] == "ada-lovelace"
    assert json.loads(run.out)["action"] == "dry-run"
    assert box.tree_digest() == before
    prose = reflect(box, capsys, monkeypatch, write(tmp_path, [PYTEST, TYPO]))
    assert prose.code == 0
    assert "Preview (nothing written):" in prose.out
    assert "run again with --apply" in prose.out
    assert box.tree_digest() == before


def test_reflect_apply_routes_through_capture_and_reports_the_gated_as_data(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    run = reflect(box, capsys, monkeypatch, write(tmp_path, [PYTEST, MEDIUM, LOW, TYPO, ADA]),
                  "--apply", "--json")
    got = {i["title"]: (i["classification"], i["path"]) for i in items(run)}
    assert got == {
        "Use pytest, not unittest": ("created",
                                     "_agent/memory/semantic/use-pytest-not-unittest.md"),
        "Deploys go through the staging branch": (
            "created", "_agent/memory/semantic/deploys-go-through-the-staging-branch.md"),
        "Try a faster linter": ("inbox", "inbox/captures/inbox.md"),
        "Ada Lovelase": ("gated", None),
        "Ada Lovelace": ("updated", "resources/people/ada-lovelace.md")}
    envelope = json.loads(run.out)
    assert envelope["ok"] is True and envelope["action"] == "reflected"
    assert "stopped (not saved): Ada Lovelase" in envelope["message"]
    note = box.read("_agent/memory/semantic/deploys-go-through-the-staging-branch.md")
    assert "Merge to staging first" in note and "deploy" in box.frontmatter(
        "_agent/memory/semantic/deploys-go-through-the-staging-branch.md")["tags"]
    assert f"- {TODAY}: Try a faster linter — Idea from the review. / Maybe ruff." in box.read(
        "inbox/captures/inbox.md").splitlines()
    assert "Asked about the engine." in box.read("resources/people/ada-lovelace.md")
    assert "ada-lovelase" not in " ".join(box.files())
    assert box.leftovers() == []


def test_reflect_confidence_routing_high_medium_to_their_kind_low_to_the_inbox(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    proposals = [{**PYTEST, "confidence": 0.85}, {**MEDIUM, "confidence": 0.6},
                 {**PYTEST, "title": "Pin numpy below 3", "confidence": 0.59}]
    run = reflect(box, capsys, monkeypatch, write(tmp_path, proposals), "--apply", "--json")
    got = [(i["band"], i["route"], i["classification"]) for i in items(run)]
    assert got == [("high", "semantic", "created"), ("medium", "semantic", "created"),
                   ("low", "inbox", "inbox")]
    assert f"- {TODAY}: Pin numpy below 3 — The operator prefers pytest." in box.read(
        "inbox/captures/inbox.md")
    assert not (box.vault / "_agent/memory/semantic/pin-numpy-below-3.md").exists()


@pytest.mark.parametrize("today", [TODAY, "2026-03-09"])
def test_reflect_second_apply_changes_nothing(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, today: str) -> None:
    source = write(tmp_path, [PYTEST, MEDIUM, LOW, TYPO, ADA])
    assert reflect(box, capsys, monkeypatch, source, "--apply").code == 0
    after_first = box.tree_digest()
    again = items(reflect(box, capsys, monkeypatch, source, "--apply", "--json", today=today))
    assert [i["classification"] for i in again] == [
        "unchanged", "unchanged", "unchanged", "gated", "unchanged"]
    assert box.tree_digest() == after_first
    preview = items(reflect(box, capsys, monkeypatch, source, "--json", today=today))
    assert [i["classification"] for i in preview] == [
        "unchanged", "unchanged", "unchanged", "gated", "unchanged"]


def test_reflect_unchanged_when_the_note_already_holds_the_text(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A proposal written earlier by other means (capture, session-end) is not appended
    a second time."""
    assert box.capture(PYTEST["title"], kind="semantic", body=PYTEST["body"]).ok
    before = box.tree_digest()
    run = reflect(box, capsys, monkeypatch, write(tmp_path, [PYTEST]), "--apply", "--json")
    assert [i["classification"] for i in items(run)] == ["unchanged"]
    assert box.tree_digest() == before


def test_reflect_contradiction_is_reported_with_the_supersedes_that_answers_it(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert reflect(box, capsys, monkeypatch, write(tmp_path, [PYTEST]), "--apply").code == 0
    flip = {"title": "Never use pytest", "kind": "semantic",
            "body": "Use unittest, not pytest.", "confidence": 0.9}
    before = box.tree_digest()
    preview = items(reflect(box, capsys, monkeypatch, write(tmp_path, [flip]), "--json"))
    assert preview[0]["classification"] == "supersede-suggested"
    assert preview[0]["supersedes"] == ["use-pytest-not-unittest"]
    stopped = reflect(box, capsys, monkeypatch, write(tmp_path, [flip]), "--apply", "--json")
    assert stopped.code == 0
    assert [(i["classification"], i["supersedes"]) for i in items(stopped)] == [
        ("contradiction", ["use-pytest-not-unittest"])]
    assert box.tree_digest() == before
    answer = {**flip, "supersedes": "use-pytest-not-unittest"}
    assert items(reflect(box, capsys, monkeypatch, write(tmp_path, [answer]),
                         "--json"))[0]["classification"] == "supersede"
    done = items(reflect(box, capsys, monkeypatch, write(tmp_path, [answer]), "--apply",
                         "--json"))
    assert done[0]["classification"] == "superseded"
    assert done[0]["superseded"] == "_agent/memory/semantic/use-pytest-not-unittest.md"
    assert box.frontmatter(done[0]["superseded"])["superseded_by"]


@pytest.mark.parametrize(("proposals", "field"), [
    ([PYTEST, {**LOW, "confidence": 1.5}], "proposals[1].confidence"),
    ([PYTEST, {**LOW, "colour": "red"}], "proposals[1].colour"),
    ([{"title": "No body", "confidence": 0.9}], "proposals[0].body"),
    ([{**PYTEST, "kind": "spaceship"}], "proposals[0].kind"),
    ([{**PYTEST, "title": "two\nlines"}], "proposals[0].title"),
    ([{**PYTEST, "date": "yesterday"}], "proposals[0].date"),
    ([{**LOW, "supersedes": "x"}], "proposals[0].supersedes"),
    ([PYTEST, "just text"], "proposals[1]"),
    ({"items": []}, "PROPOSALS"),
])
def test_reflect_invalid_proposals_exit_2_naming_the_field_and_write_nothing(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, proposals: Any, field: str) -> None:
    before = box.tree_digest()
    run = reflect(box, capsys, monkeypatch, write(tmp_path, proposals), "--apply")
    assert run.code == 2, run.out
    assert field in run.err
    assert box.tree_digest() == before


@pytest.mark.parametrize("args", [[], ["missing.json"], ["proposals.json", "--transcript",
                                                         "t.jsonl"]])
def test_reflect_without_a_readable_source_exits_2(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, [PYTEST])
    before = box.tree_digest()
    run = reflect(box, capsys, monkeypatch, *args)
    assert run.code == 2
    assert "PROPOSALS" in run.err
    assert box.tree_digest() == before


@pytest.mark.parametrize("raw", [b"{not json", b"\xff\xfe", b"null", b"[1, 2]", b"",
                                 b'[{"title": "x", "body": "y", "confidence": NaN}]'])
def test_reflect_hostile_stdin_is_a_clear_usage_error(
        box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        raw: bytes) -> None:
    before = box.tree_digest()
    run = reflect(box, capsys, monkeypatch, "-", stdin=raw)
    assert run.code == 2, run.out
    assert run.err.startswith("error: ") and "Traceback" not in run.err
    assert box.tree_digest() == before


def test_reflect_reads_stdin_and_the_proposals_wrapper(
        box: VaultBox, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    raw = json.dumps({"proposals": [PYTEST]}).encode()
    run = reflect(box, capsys, monkeypatch, "-", "--json", stdin=raw)
    assert [i["classification"] for i in items(run)] == ["create"]


def test_reflect_an_empty_list_does_nothing(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = box.tree_digest()
    run = reflect(box, capsys, monkeypatch, write(tmp_path, []), "--apply")
    assert run.code == 0 and "No proposals: nothing to do." in run.out
    assert box.tree_digest() == before


def test_reflect_one_failing_or_stopped_capture_does_not_stop_the_others(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A supersedes naming no note fails that proposal (error); an alias another note
    holds stops it (gated); the proposals after them are still captured."""
    nobody = {"title": "Grace Hopper", "kind": "person", "body": "Wrote a compiler.",
              "supersedes": "nobody-here", "confidence": 0.9}
    taken = {"title": "Charles Babbage", "kind": "person", "body": "Built the engine.",
             "aliases": ["Ada Lovelace"], "confidence": 0.9}
    run = reflect(box, capsys, monkeypatch, write(tmp_path, [nobody, taken, PYTEST]),
                  "--apply", "--json")
    assert run.code == 1, run.err
    answer = json.loads(run.out)
    got = answer["items"]
    assert answer["ok"] is False and "failed" in answer["message"]
    assert [i["classification"] for i in got] == ["error", "gated", "created"]
    assert "nobody-here" in got[0]["detail"] and "Ada Lovelace" in got[1]["detail"]
    assert not (box.vault / "resources/people/grace-hopper.md").exists()
    assert (box.vault / "resources/people").exists()


def test_reflect_apply_with_a_failed_proposal_exits_1_and_names_it(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A script running ``reflect --apply`` learns from the exit code that a proposal was
    not saved; the preview of the same batch stays exit 0 (nothing was attempted)."""
    nobody = {"title": "Grace Hopper", "kind": "person", "body": "Wrote a compiler.",
              "supersedes": "nobody-here", "confidence": 0.9}
    source = write(tmp_path, [nobody, PYTEST])
    preview = reflect(box, capsys, monkeypatch, source)
    assert preview.code == 0, preview.err
    applied = reflect(box, capsys, monkeypatch, source, "--apply")
    assert applied.code == 1
    assert "failed (not saved" in applied.out and "Grace Hopper" in applied.out
    again = reflect(box, capsys, monkeypatch, write(tmp_path, [PYTEST], "ok.json"), "--apply")
    assert again.code == 0, again.err


@pytest.mark.parametrize("body", ["Swap ~~old~~ for new.", "Path is C:\\temp\\", "Plain."])
def test_reflect_knows_an_inbox_line_once_triage_has_struck_it(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    from echo_core.ops.inbox_marks import expired_line

    source = write(tmp_path, [{**LOW, "body": body}])
    assert reflect(box, capsys, monkeypatch, source, "--apply").code == 0
    inbox = box.vault / "inbox/captures/inbox.md"
    lines = inbox.read_text(encoding="utf-8").splitlines()
    waiting = [n for n, line in enumerate(lines) if line.startswith(f"- {TODAY}: ")]
    assert len(waiting) == 1
    lines[waiting[0]] = expired_line(lines[waiting[0]], "2026-03-05")
    inbox.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = box.tree_digest()
    again = items(reflect(box, capsys, monkeypatch, source, "--apply", "--json",
                          today="2026-03-09"))
    assert [i["classification"] for i in again] == ["unchanged"]
    assert box.tree_digest() == before
