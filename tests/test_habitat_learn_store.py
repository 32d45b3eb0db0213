"""Storing learnings (issue 18 item 2): a near-duplicate reinforces, two processes at
once make one learning, a writer killed mid-store tears and doubles nothing, hostile
input is refused or stored literally, a damaged store is never replaced."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from plugins.habitat.learnings import LearningStore
from plugins.habitat.learnings_ops import MAX_CONTENT
from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun, run_main

REPO = Path(__file__).resolve().parent.parent
TEXT = "Run the tests with pytest -n 2 before committing."
NEAR = "run tests with pytest -n 2 before commiting"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path / "box").init()


def cli(box: VaultBox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        *args: str, today: str = "2026-03-01", stdin: bytes = b"") -> CliRun:
    """``echo-memory <args> --vault V --state-dir S`` in this process, ``today`` pinned."""
    for key in [k for k in os.environ if k.startswith("ECHO_") and k != "ECHO_PLUGIN_DISTS"]:
        monkeypatch.delenv(key)
    for key, value in box.env(ECHO_TODAY=today).items():
        monkeypatch.setenv(key, value)
    words = list(args)
    at = 2 if words[:1] == ["habitat"] else 1
    words[at:at] = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    return run_main(words, capsys, monkeypatch, stdin=stdin)


def learn(box: VaultBox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
          text: str, *more: str, today: str = "2026-03-01") -> dict[str, Any]:
    done = cli(box, monkeypatch, capsys, "habitat", "learn", text, "--json", *more, today=today)
    assert done.code == 0, done.err
    data: dict[str, Any] = json.loads(done.out)
    return data


def store_of(box: VaultBox) -> LearningStore:
    found = list(box.state.rglob("learnings.sqlite"))
    assert len(found) == 1, found
    return LearningStore(found[0])


def test_storing_near_identical_text_twice_makes_one_learning_with_recurrence_2(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    first = learn(box, monkeypatch, capsys, TEXT, "--type", "finding", "--tags", "tests",
                  "--agent-id", "agent-a", "--session-id", "s-1", "--rationale", "timed out")
    second = learn(box, monkeypatch, capsys, NEAR, "--tags", "ci,Tests", "--agent-id",
                   "agent-b", "--session-id", "s-2")
    assert first["action"] == "stored" and second["action"] == "reinforced"
    assert second["learning"]["id"] == first["learning"]["id"]
    learnings = store_of(box).list()
    assert len(learnings) == 1
    one = learnings[0]
    assert (one.recurrence, one.state, one.type, one.tags) == (2, "pending", "finding",
                                                                ("tests", "ci"))
    assert (one.content, one.agent_id, one.session_id, one.rationale) == (
        TEXT, "agent-a", "s-1", "timed out")
    provenance = store_of(box).provenance(one.id)
    assert [(p.agent_id, p.session_id, p.content) for p in provenance] == [
        ("agent-a", "s-1", TEXT), ("agent-b", "s-2", NEAR)]


def test_a_different_learning_is_a_second_row(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    learn(box, monkeypatch, capsys, "Never deploy on Fridays")
    learn(box, monkeypatch, capsys, "Always deploy on Fridays")
    assert [x.recurrence for x in store_of(box).list()] == [1, 1]


def test_secrets_are_redacted_and_private_text_dropped_before_the_store(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    key = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8" * 5
    data = learn(box, monkeypatch, capsys,
                 f"The staging key is {key} <private>and the root password</private> rotate it")
    assert key not in data["learning"]["content"] and "root password" not in json.dumps(data)
    assert data["redacted"]
    raw = b"".join(p.read_bytes() for p in box.state.rglob("learnings.sqlite*"))
    assert key.encode() not in raw and b"root password" not in raw


def test_private_text_of_the_rationale_is_dropped_too(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = learn(box, monkeypatch, capsys, "Rotate the staging key monthly", "--rationale",
                 "it leaked <private>through the ops laptop</private> once")
    assert "ops laptop" not in json.dumps(data)
    raw = b"".join(p.read_bytes() for p in box.state.rglob("learnings.sqlite*"))
    assert b"ops laptop" not in raw


@pytest.mark.parametrize(("args", "needle"), [
    (["x" * (MAX_CONTENT + 1)], "content"),
    (["   "], "content"),
    (["ok", "--type", "opinion"], "type"),
    (["ok", "--tags", ",".join(f"t{i}" for i in range(21))], "tags"),
    (["bad \x00 byte"], "content"),
    (["ok", "--agent-id", "a\x07b"], "agent_id"),
])
def test_invalid_input_is_refused_naming_the_field_and_nothing_is_stored(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        args: list[str], needle: str) -> None:
    done = cli(box, monkeypatch, capsys, "habitat", "learn", *args)
    assert done.code == 2 and needle in done.err, (done.code, done.err)
    assert not list(box.state.rglob("learnings.sqlite")) or store_of(box).list() == []


def test_text_that_is_not_utf8_is_refused(box: VaultBox) -> None:
    from echo_core import EchoError
    from plugins.habitat.learnings_ops import store_learning

    with pytest.raises(EchoError) as caught:
        store_learning(box.ctx(), "caf\udce9 au lait")
    assert caught.value.code == 2 and "UTF-8" in caught.value.message


def test_hostile_names_and_tags_are_stored_literally(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    hostile = "x'); DROP TABLE learnings; --"
    data = learn(box, monkeypatch, capsys, f"Quote {hostile} in SQL", "--tags",
                 "../../etc/passwd,#Ops Team", "--agent-id", hostile, "--session-id", "%_")
    learning = store_of(box).get(data["learning"]["id"])
    assert learning is not None
    assert learning.content == f"Quote {hostile} in SQL" and learning.agent_id == hostile
    assert learning.tags == ("etc/passwd", "ops-team") and learning.session_id == "%_"
    assert store_of(box).matching("%") == [] and store_of(box).matching("_") == []


def test_an_unknown_or_ambiguous_id_is_refused(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    learn(box, monkeypatch, capsys, TEXT)
    assert cli(box, monkeypatch, capsys, "habitat", "approve", "ffffffff").code == 44
    assert cli(box, monkeypatch, capsys, "habitat", "reject", "ffff", "no").code == 44


def test_a_damaged_store_is_reported_and_never_replaced(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    learn(box, monkeypatch, capsys, TEXT)
    path = store_of(box).path
    for extra in path.parent.glob("learnings.sqlite-*"):
        extra.unlink()
    path.write_bytes(b"this is not a database" * 100)
    done = cli(box, monkeypatch, capsys, "habitat", "learn", "another thing")
    assert done.code == 78 and "move" in done.err
    assert path.read_bytes() == b"this is not a database" * 100


# --- concurrency and kills ----------------------------------------------------------------

_WORKER = """
import datetime, os, sys, time
from pathlib import Path
from plugins.habitat.learnings import LearningStore
store, start, texts = LearningStore(Path(sys.argv[1])), float(sys.argv[2]), sys.argv[3:]
while time.time() < start:
    pass
now = datetime.datetime(2026, 3, 1, 9, 30)
for i, text in enumerate(texts):
    store.store(text, type="learning", tags=[], agent_id=f"p{os.getpid()}",
                session_id=str(i), rationale="", now=now)
    print(f"ack {i}", flush=True)
"""


def _workers(path: Path, texts_per_worker: list[list[str]]) -> list[subprocess.Popen[str]]:
    start = time.time() + 1.5
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return [subprocess.Popen([sys.executable, "-c", _WORKER, str(path), str(start), *texts],
                             stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)
            for texts in texts_per_worker]


def test_two_processes_storing_the_same_text_at_once_make_one_learning_recurrence_2(
        tmp_path: Path) -> None:
    path = tmp_path / "learnings.sqlite"
    procs = _workers(path, [[TEXT], [TEXT]])
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    learnings = LearningStore(path).list()
    assert len(learnings) == 1 and learnings[0].recurrence == 2
    assert len(LearningStore(path).provenance(learnings[0].id)) == 2


def test_eight_writers_of_variants_make_one_learning_per_idea(tmp_path: Path) -> None:
    path = tmp_path / "learnings.sqlite"
    variants = [TEXT, NEAR, TEXT.upper(), TEXT.replace("tests", "test")]
    other = ["Never deploy on Fridays", "never deploy on fridays!"]
    procs = _workers(path, [variants + other for _ in range(8)])
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    counts = sorted(x.recurrence for x in LearningStore(path).list())
    assert counts == [16, 32]


def test_a_writer_killed_mid_store_tears_loses_and_doubles_nothing(tmp_path: Path) -> None:
    path = tmp_path / "learnings.sqlite"
    texts = [TEXT, NEAR, "Never deploy on Fridays", *(f"Idea number {i} of many" for i in
                                                        ("one", "two", "three", "four"))] * 40
    acked = 0
    for round_ in range(3):
        (proc,) = _workers(path, [texts])
        assert proc.stdout is not None
        seen = 0
        for line in proc.stdout:
            seen += line.startswith("ack")
            if seen >= 15 + 10 * round_:
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        acked += seen
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        provenance = conn.execute("SELECT COUNT(*) FROM provenance").fetchone()[0]
        recurrence = conn.execute("SELECT SUM(recurrence) FROM learnings").fetchone()[0]
        stored = conn.execute("SELECT COUNT(*) FROM state_changes WHERE why = 'stored'"
                              ).fetchone()[0]
        rows = conn.execute("SELECT COUNT(*) FROM learnings").fetchone()[0]
        fts = conn.execute("SELECT COUNT(*) FROM learning_fts").fetchone()[0]
    finally:
        conn.close()
    assert acked <= provenance <= acked + 3  # each kill may land after a commit, before its ack
    assert recurrence == provenance  # every store counted once, none doubled
    assert rows == stored == fts == 6  # six ideas, each stored once
