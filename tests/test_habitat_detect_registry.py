"""The pattern registry (``patterns.PatternStore``): one pattern per signature,
idempotent registration, batches, the status lifecycle, and nothing torn, lost or doubled
under concurrent writers or a writer killed mid-transaction."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plugins.habitat.distil_model import Failure
from plugins.habitat.patterns import PatternStore, pattern_id
from plugins.habitat.patterns_lifecycle import ALLOWED, STATUSES

NOW = "2026-03-01T12:00:00"


def failure(n: int, *, kind: str = "error_streak", signature: str = "error_streak|Bash|boom",
            records: tuple[str, ...] | None = None, ts: str = "2026-03-01T09:00:00",
            severity: str = "medium") -> Failure:
    ids = records or tuple(f"r{n:05d}-{k}" for k in range(3))
    return Failure(kind=kind, key=f"{kind}|{ids[0]}", signature=signature, severity=severity,
                   session_id=f"s-{n}", agent_id="agent-a", record_ids=ids, first_ts=ts,
                   last_ts=ts, summary=f"failure {n}", tool="Bash")


def rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    db = sqlite3.connect(path)
    try:
        tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master")}
        return {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
                if t in tables else []
                for t in ("patterns", "occurrences", "evidence", "transitions", "batches")}
    finally:
        db.close()


@pytest.fixture()
def store(tmp_path: Path) -> PatternStore:
    return PatternStore(tmp_path / "habitat" / "patterns.sqlite")


def test_one_signature_is_one_pattern_whose_recurrence_counts_occurrences(
        store: PatternStore) -> None:
    result = store.register([failure(1), failure(2)], now=NOW)
    assert result.new_patterns == (pattern_id("error_streak|Bash|boom"),)
    assert (result.new_occurrences, result.new_evidence) == (2, 6)
    [pattern] = store.list()
    assert (pattern.recurrence, pattern.status) == (2, "monitoring")
    third = store.register([failure(3, ts="2026-03-02T08:00:00")], now=NOW)
    assert third.moves == (f"{pattern.id}: monitoring -> actionable (recurred 3 times)",)
    [pattern] = store.list()
    assert (pattern.recurrence, pattern.status, pattern.last_seen) == (
        3, "actionable", "2026-03-02T08:00:00")


def test_a_streak_found_again_longer_adds_evidence_not_recurrence(store: PatternStore) -> None:
    store.register([failure(1, records=("a1", "a2", "a3"))], now=NOW)
    grown = failure(1, records=("a1", "a2", "a3", "a4", "a5"))
    result = store.register([grown], now=NOW)
    assert (result.new_occurrences, result.new_evidence) == (0, 2)
    [pattern] = store.list()
    assert pattern.recurrence == 1 and pattern.evidence == ("a1", "a2", "a3", "a4", "a5")
    shifted = failure(1, records=("a2", "a3", "a4", "a5", "a6"))  # a window cut its start
    assert store.register([shifted], now=NOW).new_occurrences == 0
    assert store.list()[0].recurrence == 1


def test_failures_fill_batches_of_eight_in_order_and_stay_there(store: PatternStore) -> None:
    store.register([failure(n, signature=f"error_streak|Bash|e{n}") for n in range(10)],
                   now=NOW)
    assert [(b, n) for b, _, _, n in store.batches()] == [("b0001", 8), ("b0002", 2)]
    first = [o["summary"] for o in store.occurrences(batch_id="b0001")]
    assert first == [f"failure {n}" for n in range(8)]
    store.register([failure(n, signature=f"error_streak|Bash|e{n}") for n in range(10)],
                   now=NOW)
    store.register([failure(20)], now=NOW, batch_size=3)
    assert [(b, s, n) for b, _, s, n in store.batches()] == [
        ("b0001", 8, 8), ("b0002", 8, 3)]


def test_every_allowed_move_and_no_other(store: PatternStore) -> None:
    store.register([failure(1)], now=NOW)
    pid = store.list()[0].id
    db = store.path
    for start in STATUSES:
        for to in STATUSES:
            if to == start:
                continue
            con = sqlite3.connect(db)
            con.execute("UPDATE patterns SET status = ?", (start,))
            con.commit()
            con.close()
            if to in ALLOWED[start]:
                assert store.move(pid, to, now=NOW, by="t").status == to
            else:
                with pytest.raises(ValueError, match=f"a {start} pattern cannot become {to}"):
                    store.move(pid, to, now=NOW, by="t")
    with pytest.raises(KeyError):
        store.move("p-nope", "dismissed", now=NOW, by="t")


def test_a_fix_that_works_holds_until_the_failure_recurs_after_it(store: PatternStore) -> None:
    store.register([failure(1, ts="2026-03-01T09:00:00")], now=NOW)
    pid = store.list()[0].id
    store.move(pid, "actionable", now=NOW, by="operator")
    proposed = store.propose_fix(pid, "pin foo-client in pyproject", now=NOW, by="fix-arc")
    assert (proposed.status, proposed.fix) == ("proposed_fix", "pin foo-client in pyproject")
    fixed = store.fix_outcome(pid, worked=True, outcome="CI green 3 days", now=NOW,
                              by="fix-arc")
    assert (fixed.status, fixed.fix_outcome) == ("fixed", "CI green 3 days")
    store.register([failure(2, ts="2026-03-01T10:00:00")], now=NOW)  # before the fix
    assert store.get(pid).status == "fixed"  # type: ignore[union-attr]
    result = store.register([failure(3, ts="2026-03-02T10:00:00")], now=NOW)
    assert result.moves == (f"{pid}: fixed -> actionable (recurred after the fix)",)
    history = [(a, b, by) for a, b, _, by, _ in store.transitions(pid)]
    assert history == [("", "monitoring", "habitat"), ("monitoring", "actionable", "operator"),
                       ("actionable", "proposed_fix", "fix-arc"),
                       ("proposed_fix", "fixed", "fix-arc"),
                       ("fixed", "actionable", "habitat")]


def test_a_dismissed_pattern_keeps_its_status_and_gains_evidence(store: PatternStore) -> None:
    store.register([failure(1)], now=NOW)
    pid = store.list()[0].id
    store.move(pid, "dismissed", now=NOW, by="operator", note="flaky CI")
    store.register([failure(n, severity="high") for n in range(2, 7)], now=NOW)
    pattern = store.get(pid)
    assert pattern is not None
    assert (pattern.status, pattern.recurrence, pattern.severity) == ("dismissed", 6, "high")


def test_severity_is_the_worst_occurrence_raised_after_five(store: PatternStore) -> None:
    store.register([failure(n, severity="low") for n in range(4)], now=NOW)
    assert store.list()[0].severity == "low"
    store.register([failure(9, severity="low")], now=NOW)
    assert store.list()[0].severity == "medium"


_WORKER = """
import sys
from plugins.habitat.distil_model import Failure
from plugins.habitat.patterns import PatternStore
n, path = int(sys.argv[1]), sys.argv[2]
batch = [Failure(kind="error_streak", key=f"error_streak|r{i}", signature=f"error_streak|T|e{i % 7}",
                 severity="medium", session_id="s", agent_id="a",
                 record_ids=(f"r{i}", f"r{i}b"), first_ts="2026-03-01T09:00:00",
                 last_ts="2026-03-01T09:00:00", summary="x") for i in range(n)]
print("start", flush=True)
PatternStore(__import__("pathlib").Path(path)).register(batch, now="2026-03-01T12:00:00")
print("done", flush=True)
"""


def _worker(n: int, path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _WORKER, str(n), str(path)],
                            stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parent.parent)


def test_concurrent_writers_of_the_same_failures_double_nothing(tmp_path: Path) -> None:
    path = tmp_path / "patterns.sqlite"
    workers = [_worker(300, path) for _ in range(4)]
    assert all(w.wait(timeout=120) == 0 for w in workers)
    alone = tmp_path / "alone.sqlite"
    assert _worker(300, alone).wait(timeout=120) == 0
    assert rows(path) == rows(alone)
    assert len(rows(path)["occurrences"]) == 300 and len(rows(path)["evidence"]) == 600


def test_a_writer_killed_mid_transaction_leaves_all_or_nothing(tmp_path: Path) -> None:
    path = tmp_path / "patterns.sqlite"
    for delay in (0.02, 0.1, 0.2):
        worker = _worker(20_000, path)
        assert worker.stdout is not None and worker.stdout.readline().strip() == "start"
        time.sleep(delay)
        os.kill(worker.pid, signal.SIGKILL)
        assert worker.wait(timeout=30) == -signal.SIGKILL
        found = rows(path)
        assert len(found["occurrences"]) in (0, 20_000)
        assert len(found["evidence"]) == 2 * len(found["occurrences"])
        db = sqlite3.connect(path)
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        db.close()
    assert _worker(20_000, path).wait(timeout=300) == 0
    found = rows(path)
    assert len(found["occurrences"]) == 20_000 and len(found["patterns"]) == 7
    assert sum(int(str(p[8])) for p in found["patterns"]) == 20_000  # recurrence adds up


def test_hostile_names_are_data(store: PatternStore) -> None:
    evil = "x'); DROP TABLE patterns; --"
    store.register([failure(1, signature=f"error_streak|{evil}|\u202e\x00",
                            records=(evil, evil + "2", "\ud7ff"))], now=NOW)
    [pattern] = store.list()
    assert evil in pattern.signature and pattern.evidence == tuple(
        sorted((evil, evil + "2", "\ud7ff")))
