"""``reflect corpus`` (issue 17 item 3, SPEC §4.4): every transcript mined, dry run by
default, resumable state, changed / deleted / unreadable transcripts, apply once."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from echo_core import progress
from echo_core.ops.reflect_corpus import find_transcripts, mine_corpus
from echo_core.ops.reflect_corpus_apply import ledger_path
from echo_core.ops.reflect_corpus_report import corpus_reflect
from echo_core.ops.reflect_corpus_state import proposal_to_json
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.transcript_kit import prompt_session, write_corpus

PREFER_PYTEST = "Always use pytest, not unittest, for new tests."
PREFER_RUFF = "Use ruff not flake8 for linting."
NEVER_MAIN = "Never push directly to main; open a pull request."
IDEA = "Idea: we could cache the parsed index between runs later."


def _write(root: Path, rel: str, data: bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _by_title(scan: Any) -> dict[str, Any]:
    return {p.key(): p for p in scan.proposals}


def _occurrences(scan: Any, text: str) -> int:
    found = [p for p in scan.proposals if text.lower() in p.title.lower()]
    return sum(p.occurrences for p in found)


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """Three sessions in two projects: pytest stated three times, ruff once, an idea."""
    root = tmp_path / "projects"
    _write(root, "-home-ada-src-app/s1.jsonl", prompt_session("s1", [PREFER_PYTEST, IDEA]))
    _write(root, "-home-ada-src-app/s2.jsonl", prompt_session("s2", [PREFER_PYTEST, PREFER_RUFF]))
    _write(root, "-home-ada-src-web/s3.jsonl", prompt_session("s3", ["fix it", PREFER_PYTEST]))
    return root


def test_transcripts_are_found_below_the_projects_dir_in_path_order(small: Path) -> None:
    _write(small, "-home-ada-src-app/s0/subagents/agent-1.jsonl", b"")
    (small / "notes.txt").write_text("not a transcript")
    assert find_transcripts(small) == ["-home-ada-src-app/s0/subagents/agent-1.jsonl",
                                       "-home-ada-src-app/s1.jsonl", "-home-ada-src-app/s2.jsonl",
                                       "-home-ada-src-web/s3.jsonl"]


def test_repeats_merge_across_sessions_with_their_count(small: Path, tmp_path: Path) -> None:
    scan = mine_corpus(small, tmp_path / "state.json")
    assert scan.transcripts == 3 and scan.mined == 3 and scan.reused == 0
    assert _occurrences(scan, "pytest") == 3
    pytest_pref = next(p for p in scan.proposals if "pytest" in p.title.lower())
    assert set(pytest_pref.sessions) == {"s1", "s2", "s3"}
    assert _occurrences(scan, "ruff") == 1
    assert {p.category for p in scan.proposals} == {"preference", "idea"}


def test_a_second_run_reads_nothing_and_gives_the_same_proposals(small: Path,
                                                                  tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    first = mine_corpus(small, state)
    again = mine_corpus(small, state)
    assert (again.mined, again.reused, again.bytes_read, again.batches) == (0, 3, 0, 0)
    assert again.proposals == first.proposals


def test_a_changed_transcript_replaces_its_contribution(small: Path, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    mine_corpus(small, state)
    _write(small, "-home-ada-src-app/s2.jsonl", prompt_session("s2", [NEVER_MAIN, "thanks"]))
    scan = mine_corpus(small, state)
    assert (scan.mined, scan.changed, scan.reused) == (1, 1, 2)
    assert _occurrences(scan, "pytest") == 2  # s2's statement is gone, not added to
    assert _occurrences(scan, "ruff") == 0
    assert _occurrences(scan, "push directly to main") == 1


def test_a_touched_transcript_with_the_same_bytes_is_not_mined_again(small: Path,
                                                                     tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    first = mine_corpus(small, state)
    path = small / "-home-ada-src-web/s3.jsonl"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    scan = mine_corpus(small, state)
    assert (scan.mined, scan.changed, scan.reused) == (0, 0, 3)
    assert scan.bytes_read == path.stat().st_size  # read once to compare the hash
    assert mine_corpus(small, state).bytes_read == 0  # its new time was recorded
    assert scan.proposals == first.proposals


def test_a_deleted_transcript_drops_its_contribution(small: Path, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    mine_corpus(small, state)
    (small / "-home-ada-src-app/s2.jsonl").unlink()
    scan = mine_corpus(small, state)
    assert (scan.transcripts, scan.removed, scan.mined) == (2, 1, 0)
    assert _occurrences(scan, "pytest") == 2 and _occurrences(scan, "ruff") == 0
    saved = json.loads(state.read_text("utf-8"))
    assert sorted(saved["transcripts"]) == ["-home-ada-src-app/s1.jsonl",
                                            "-home-ada-src-web/s3.jsonl"]


def test_an_unreadable_transcript_is_skipped_reported_and_tried_again(small: Path,
                                                                      tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    dangling = small / "-home-ada-src-app/s4.jsonl"
    dangling.symlink_to(tmp_path / "nowhere.jsonl")  # listed, but cannot be opened
    scan = mine_corpus(small, state)
    assert [s.path for s in scan.skipped] == ["-home-ada-src-app/s4.jsonl"]
    assert "No such file" in scan.skipped[0].reason
    assert (scan.transcripts, scan.mined) == (4, 3)
    assert _occurrences(scan, "pytest") == 3
    dangling.unlink()
    _write(small, "-home-ada-src-app/s4.jsonl", prompt_session("s4", [PREFER_PYTEST]))
    later = mine_corpus(small, state)
    assert (later.mined, later.skipped) == (1, ())
    assert _occurrences(later, "pytest") == 4


def test_hostile_transcripts_never_stop_the_corpus(small: Path, tmp_path: Path) -> None:
    _write(small, "x/binary.jsonl", os.urandom(4096) + b"\n\xff\xfe\x00")
    _write(small, "x/nested.jsonl", b"[" * 100_000 + b"\n" + b'{"type": "user"}\n')
    _write(small, "x/wrong-types.jsonl",
           b'{"type": "user", "message": {"content": 7}}\n{"type": ["a"]}\n"text"\nnull\n'
           b'{"type": "user", "message": {"role": "user", "content": [{"type": 5}]}}\n')
    _write(small, "x/long-line.jsonl",
           b'{"type": "user", "message": {"role": "user", "content": "'
           + b"a" * (9 * 1024 * 1024) + b'"}}\n' + prompt_session("s9", [PREFER_RUFF]))
    _write(small, "x/empty.jsonl", b"")
    scan = mine_corpus(small, tmp_path / "state.json")
    assert scan.skipped == () and scan.transcripts == 8
    assert _occurrences(scan, "ruff") == 2  # the line after the over-long one still counts


def test_state_is_saved_after_every_batch_and_progress_reaches_the_total(
        tmp_path: Path) -> None:
    root = tmp_path / "projects"
    write_corpus(root, seed=7, count=23)
    seen: list[tuple[int, int]] = []
    saves: list[int] = []
    with progress.reporting(lambda done, total: seen.append((done, total))):
        scan = mine_corpus(root, tmp_path / "state.json", batch=5,
                           after_batch=lambda n: saves.append(
                               len(json.loads((tmp_path / "state.json").read_text())
                                   ["transcripts"])))
    assert scan.batches == 5 and saves == [5, 10, 15, 20, 23]
    assert seen[0] == (0, 23) and seen[-1] == (23, 23)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def _bad_proposal_state(small: Path, tmp_path: Path) -> str:
    mine_corpus(small, tmp_path / "good.json")
    data = json.loads((tmp_path / "good.json").read_text("utf-8"))
    entry = next(e for e in data["transcripts"].values() if e["proposals"])
    entry["proposals"][0]["title"] = 5
    return json.dumps(data)


@pytest.mark.parametrize("bad", ["torn", "wrong-type", "bad-proposal", "other-format"])
def test_a_corrupt_state_file_is_set_aside_and_the_run_starts_over(small: Path,
                                                                    tmp_path: Path,
                                                                    bad: str) -> None:
    state = tmp_path / "state.json"
    reference = mine_corpus(small, tmp_path / "clean.json")
    text = {"torn": '{"format": 1, "transcripts": {"a": {"si',
            "wrong-type": '{"format": 1, "transcripts": {"a": {"size": "x"}}}',
            "bad-proposal": _bad_proposal_state(small, tmp_path) if bad == "bad-proposal" else "",
            "other-format": '{"format": 99, "transcripts": {}}'}[bad]
    state.write_text(text, encoding="utf-8")
    scan = mine_corpus(small, state)
    assert "not a corpus state" in scan.state_problem and scan.mined == 3
    assert (tmp_path / "state.json.unreadable").exists()
    assert scan.proposals == reference.proposals
    assert json.loads(state.read_text("utf-8"))["format"] == 1


def test_a_state_file_of_another_projects_dir_is_not_used(small: Path, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    mine_corpus(small, state)
    other = tmp_path / "other"
    _write(other, "p/s1.jsonl", prompt_session("s1", [PREFER_RUFF]))
    scan = mine_corpus(other, state)
    assert "starting over" in scan.state_problem
    assert _occurrences(scan, "pytest") == 0 and _occurrences(scan, "ruff") == 1


# --- the verb: dry run, apply, errors ----------------------------------------------------


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path / "box").init()


def _cli(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         *args: str) -> Any:
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    return run_main(["reflect", "corpus", "--vault", str(box.vault), "--state-dir",
                     str(box.state), *args], capsys, monkeypatch)


def test_the_dry_run_prints_the_summary_and_writes_nothing_to_the_vault(
        box: VaultBox, small: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = box.tree_digest()
    run = _cli(box, capsys, monkeypatch, "--projects-dir", str(small))
    assert run.code == 0, run.err
    assert box.tree_digest() == before
    assert "category" in run.out and "occurrences" in run.out and "preference" in run.out
    assert "3x Always use pytest" in run.out and "-> semantic" in run.out
    assert "preview (nothing written)" in run.out and "--apply" in run.out
    assert list(box.state.rglob("reflect-corpus.json"))  # resumable all the same


def test_json_output_lists_every_merged_proposal(box: VaultBox, small: Path,
                                                 capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    run = _cli(box, capsys, monkeypatch, "--projects-dir", str(small), "--json")
    data = json.loads(run.out)
    assert data["ok"] and data["action"] == "dry-run" and data["applied"] is False
    expected = mine_corpus(small, box.state / "check.json").proposals
    assert data["proposals"] == [proposal_to_json(p) for p in expected]
    rows = {r["category"]: r for r in data["categories"]}
    assert rows["preference"]["occurrences"] == 4 and rows["idea"]["to_inbox"] == 1


@pytest.mark.parametrize("where", ["missing", "file"])
def test_a_projects_dir_that_is_not_a_folder_exits_2_naming_the_option(
        box: VaultBox, tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "nope"
    if where == "file":
        target.write_text("x")
    before = box.tree_digest()
    run = _cli(box, capsys, monkeypatch, "--projects-dir", str(target), "--apply")
    assert run.code == 2
    assert "--projects-dir" in run.err and str(target) in run.err
    assert box.tree_digest() == before and not list(box.state.rglob("reflect-corpus*"))


@pytest.mark.parametrize("bad", [["--batch", "0"], ["--top", "-1"], ["--batch", "x"]])
def test_bad_numbers_exit_2(box: VaultBox, small: Path, bad: list[str],
                            capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    run = _cli(box, capsys, monkeypatch, "--projects-dir", str(small), *bad)
    assert run.code == 2 and bad[0] in run.err


def test_apply_routes_by_confidence_and_a_second_apply_writes_nothing(
        box: VaultBox, small: Path) -> None:
    envelope = corpus_reflect(box.ctx(), str(small), apply=True)
    assert envelope.ok and envelope.action == "reflected"
    outcomes = {i.title: i.outcome for i in envelope.data.items}
    pref = next(t for t in outcomes if "pytest" in t.lower())
    idea = next(t for t in outcomes if "cache the parsed index" in t.lower())
    assert outcomes[pref] == "created" and outcomes[idea] == "inbox"
    note = next(i.path for i in envelope.data.items if i.title == pref)
    assert note.startswith("_agent/memory/semantic/")
    inbox = box.read("inbox/captures/inbox.md")
    assert [line for line in inbox.splitlines() if "cache the parsed index" in line] == [
        f"- 2026-03-01: {idea} — {idea} / > {IDEA}"]  # the whole body: its quoted source too
    before = box.tree_digest()
    again = corpus_reflect(box.ctx(), str(small), apply=True)
    assert {i.outcome for i in again.data.items} == {"already"}
    assert box.tree_digest() == before
    state = Path(again.data.state_path)
    lines = ledger_path(state).read_text("utf-8").splitlines()
    assert len(lines) == len(envelope.data.items) == len({json.loads(x)["key"] for x in lines})


def test_apply_writes_only_what_is_new_after_the_corpus_grew(box: VaultBox, small: Path) -> None:
    corpus_reflect(box.ctx(), str(small), apply=True)
    _write(small, "-home-ada-src-web/s5.jsonl", prompt_session("s5", [NEVER_MAIN]))
    again = corpus_reflect(box.ctx(), str(small), apply=True)
    fresh = [i for i in again.data.items if i.outcome != "already"]
    assert [(i.outcome, "push directly to main" in i.title.lower()) for i in fresh] == [
        ("created", True)]
    assert again.data.mined == 1 and again.data.reused == 3


def test_apply_to_a_folder_that_is_not_a_vault_exits_78_and_writes_no_state(
        tmp_path: Path, small: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path / "bare")  # never initialised
    run = _cli(box, capsys, monkeypatch, "--projects-dir", str(small), "--apply")
    assert run.code == 78
    assert not list(box.vault.rglob("*")) and not list(box.state.rglob("reflect-corpus*"))
