"""Corpus mode killed and resumed (issue 17 acceptance): 500 generated transcripts, a run
SIGKILLed at a seeded random point, then resumed, gives exactly the proposals of an
uninterrupted run (compared as JSON), every transcript counted once; an apply killed
between a capture and its ledger line writes nothing twice when resumed."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from echo_core.ops.reflect_corpus import mine_corpus
from echo_core.ops.reflect_corpus_apply import ledger_path
from echo_core.ops.reflect_corpus_report import corpus_reflect, destination
from echo_core.ops.reflect_corpus_state import proposal_to_json
from tests.capture_kit import VaultBox
from tests.transcript_kit import write_corpus

REPO = Path(__file__).resolve().parent.parent
CORPUS_SIZE = 500
BATCH = 25
#: apply outcomes that wrote nothing (tried again by the next apply)
STOPPED = ("gated", "contradiction")


def _worker(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.reflect_corpus_worker", *args],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def _as_json(proposals: Any) -> str:
    return json.dumps([proposal_to_json(p) for p in proposals], sort_keys=True)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """The 500 transcripts, the JSON of an uninterrupted run's proposals, and their total
    occurrences."""
    root = tmp_path_factory.mktemp("corpus") / "projects"
    write_corpus(root, seed=17, count=CORPUS_SIZE)
    scan = mine_corpus(root, root.parent / "reference.json", batch=BATCH)
    assert scan.mined == CORPUS_SIZE and not scan.skipped
    assert len(scan.proposals) >= 20 and {p.category for p in scan.proposals} == {
        "preference", "correction", "error-fix", "idea"}
    assert max(p.occurrences for p in scan.proposals) > 10  # repeats across sessions
    return root, _as_json(scan.proposals), sum(p.occurrences for p in scan.proposals)


def _resume_and_check(root: Path, state: Path, reference: str, total: int) -> Any:
    saved = 0
    if state.exists():  # never torn: the atomic save left a whole file or none
        saved = len(json.loads(state.read_text("utf-8"))["transcripts"])
    resumed = mine_corpus(root, state, batch=BATCH)
    assert resumed.mined == CORPUS_SIZE - saved and resumed.reused == saved
    assert _as_json(resumed.proposals) == reference
    assert sum(p.occurrences for p in resumed.proposals) == total  # none counted twice
    assert len(json.loads(state.read_text("utf-8"))["transcripts"]) == CORPUS_SIZE
    assert not [p for p in state.parent.iterdir() if p.name.endswith(".tmp")]
    return resumed


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_run_killed_mid_batch_resumes_to_the_same_proposals(
        corpus: tuple[Path, str, int], tmp_path: Path, seed: int) -> None:
    root, reference, total = corpus
    state = tmp_path / "state.json"
    kill_at = random.Random(seed).randrange(1, CORPUS_SIZE)
    proc = _worker("mine", str(root), str(state), str(BATCH), str(kill_at))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, err
    saved = len(json.loads(state.read_text("utf-8"))["transcripts"]) if state.exists() else 0
    assert saved == kill_at // BATCH * BATCH  # the batch it was in was lost, no more
    _resume_and_check(root, state, reference, total)


@pytest.mark.parametrize("seed", [4, 5])
def test_a_run_killed_at_a_random_moment_twice_resumes_to_the_same_proposals(
        corpus: tuple[Path, str, int], tmp_path: Path, seed: int) -> None:
    root, reference, total = corpus
    state = tmp_path / "state.json"
    rng = random.Random(seed)
    for _ in range(2):
        proc = _worker("mine", str(root), str(state), str(BATCH), "0")
        time.sleep(rng.uniform(0.2, 0.9))  # start-up, then somewhere in the mining
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=120)
    _resume_and_check(root, state, reference, total)


def test_an_apply_killed_after_a_capture_writes_nothing_twice_when_resumed(
        tmp_path: Path) -> None:
    root = tmp_path / "projects"
    write_corpus(root, seed=23, count=60)
    box = VaultBox(tmp_path / "box").init()
    state = tmp_path / "state.json"
    preview = corpus_reflect(box.ctx(), str(root), state=str(state))
    count = len(preview.data.proposals)
    assert count >= 10
    env = {**os.environ, **box.env()}
    rng = random.Random(23)
    for kill_at in (rng.randint(2, 5), rng.randint(2, 5)):  # the 2nd counts new writes only
        proc = _worker("apply", str(box.vault), str(box.state), str(root), str(state),
                       str(kill_at), env=env)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == -signal.SIGKILL, err
    done = corpus_reflect(box.ctx(), str(root), apply=True, state=str(state))
    outcomes = [i.outcome for i in done.data.items]
    assert outcomes.count("already") >= 2
    assert "unchanged" in outcomes  # the capture that landed just before a kill
    assert set(outcomes) <= {"already", "unchanged", "created", "inbox", "gated",
                             "contradiction"}
    written = {p.key() for p, i in zip(preview.data.proposals, done.data.items, strict=True)
               if i.outcome not in STOPPED}
    keys = [json.loads(line)["key"] for line in
            ledger_path(state).read_text("utf-8").splitlines()]
    assert sorted(keys) == sorted(written)  # each written proposal recorded once
    inbox = box.read("inbox/captures/inbox.md").splitlines()
    dated = [line for line in inbox if line.startswith("- 2026-")]
    assert len(dated) == len(set(dated)) == sum(
        1 for p in preview.data.proposals if destination(p) == "inbox")
    for item in done.data.items:
        if item.path.startswith("_agent/memory/semantic/") and item.outcome not in STOPPED:
            text = box.read(item.path)
            assert "\n- 2026-03-01: " not in text, item.path  # created once, never updated
    before = box.tree_digest()
    again = corpus_reflect(box.ctx(), str(root), apply=True, state=str(state))
    assert [i.outcome for i in again.data.items] == [
        o if o in STOPPED else "already" for o in outcomes]
    assert box.tree_digest() == before
