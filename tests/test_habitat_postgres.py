"""The habitat on a PostgreSQL vault: record, learnings and patterns live in the database,
so every replica (another machine: another state dir) shares them.

Replica A and replica B are two contexts on one vault URL with state dirs of their own.
What A records, B finds, asks about, folds and scans; a learning stored on A and learned
again on B is one learning with recurrence 2; a pattern B detects is A's too. The hook
recorder (no database driver) writes this machine's spool, which the next habitat call
ships. Kill and outage tests: ``test_habitat_postgres_durability.py``; behaviour tests
run on both backends: ``test_habitat_postgres_both.py``.
"""

from __future__ import annotations

import datetime as _dt
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from echo_core.context import EchoContext, create_context
from echo_core.ops.init import init_vault
from plugins.habitat.learnings_ops import approve, list_learnings, open_store, store_learning
from plugins.habitat.loom_ask import ask_habitat
from plugins.habitat.loom_fold import fold_session
from plugins.habitat.patterns import pattern_store
from plugins.habitat.patterns_ops import flag_turn
from plugins.habitat.patterns_scan import scan
from plugins.habitat.record import Record
from plugins.habitat.record_source import find_record, record_source, session_records
from plugins.habitat.record_verbs import RecordParams, run_record
from plugins.habitat.record_writes import append_records
from tests.capture_kit import isolated_env
from tests.habitat_record_kit import payload, run_recorder
from tests.postgres_kit import close_storages, pg_schema_url, postgres_server

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures used by this module

TS = _dt.datetime(2026, 3, 1, 9, 30)


class Replicas:
    """Contexts on one PostgreSQL vault, each with a state dir of its own."""

    def __init__(self, url: str, root: Path) -> None:
        self.url = url
        self.root = root
        self.made: list[EchoContext] = []

    def env(self, name: str, **extra: str) -> dict[str, str]:
        return isolated_env(self.root / name / "home", **extra)

    def ctx(self, name: str, **env: str) -> EchoContext:
        """A fresh context of replica ``name`` (as a new process there would make it)."""
        ctx = create_context(vault=self.url, state_dir=str(self.root / name / "state"),
                             env=self.env(name, **env))
        self.made.append(ctx)
        return ctx

    def close(self) -> None:
        close_storages(self.made)


@pytest.fixture
def replicas(pg_schema_url: str, tmp_path: Path) -> Iterator[Replicas]:
    found = Replicas(pg_schema_url, tmp_path)
    assert init_vault(found.ctx("a")).ok
    yield found
    found.close()


def _records(*texts: str, session: str = "s1", agent: str = "a1", kind: str = "note",
             is_error: bool = False, result: str = "") -> list[Record]:
    return [Record.new(ts=TS + _dt.timedelta(seconds=i), kind=kind, agent_id=agent,
                       session_id=session, text=text, is_error=is_error, result=result)
            for i, text in enumerate(texts)]


# --- the record ------------------------------------------------------------------------


def test_what_replica_a_records_replica_b_finds_asks_and_folds(replicas: Replicas) -> None:
    a, b = replicas.ctx("a"), replicas.ctx("b")
    env = run_record(a, RecordParams(session_id="s1", agent_id="ci", text="deploy the web tier"))
    assert env.ok and env.action == "recorded"
    append_records(a, _records("rotate the logs", "deploy failed with exit 2", session="s1"))
    rid = env.data.ids[0]
    asked = ask_habitat(b, "deploying", 10)
    assert {h.text for h in asked.data.records} == {"deploy the web tier",
                                                     "deploy failed with exit 2"}
    found = find_record(b, rid)
    assert found is not None and found.text == "deploy the web tier" and found.agent_id == "ci"
    assert [r.text for r in session_records(b, "s1")] == [  # time order (run_record: noon)
        "rotate the logs", "deploy failed with exit 2", "deploy the web tier"]
    folded = fold_session(b, "s1")
    assert folded.ok and len(folded.data.refs) == 3
    assert find_record(a, folded.data.id) is not None  # B's fold is A's too
    # nothing of it is in a day file: the record is the database's
    assert not list((replicas.root / "b").rglob("*.jsonl"))
    assert not list((replicas.root / "a").rglob("*.jsonl"))


def test_the_whole_record_reads_day_by_day_in_time_order(replicas: Replicas) -> None:
    a, b = replicas.ctx("a"), replicas.ctx("b")
    append_records(a, _records("two", session="s2")[:1] + _records("one")[:1])
    later = Record.new(ts=TS + _dt.timedelta(days=1), kind="note", agent_id="a2",
                       session_id="s3", text="next day")
    append_records(b, [later])
    source = record_source(a)
    assert source.days() == ["2026-03-01", "2026-03-02"]
    assert [r.text for r in source.records()] == ["two", "one", "next day"]
    assert [r.text for r in source.records(["2026-03-02"])] == ["next day"]


def test_concurrent_records_of_two_replicas_are_all_kept_once(replicas: Replicas) -> None:
    a, b = replicas.ctx("a"), replicas.ctx("b")
    ids: list[str] = []
    guard = threading.Lock()

    def write(ctx: EchoContext, name: str) -> None:
        for n in range(20):
            batch = _records(f"{name} {n} x", f"{name} {n} y", session=name)
            append_records(ctx, batch)
            with guard:
                ids.extend(r.id for r in batch)

    threads = [threading.Thread(target=write, args=(ctx, f"{name}{t}"))
               for ctx, name in ((a, "a"), (b, "b")) for t in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seen = [r.id for r in record_source(replicas.ctx("c")).records()]
    assert sorted(seen) == sorted(ids) and len(ids) == 240


def test_the_hook_recorders_spool_joins_the_shared_record(replicas: Replicas,
                                                           tmp_path: Path) -> None:
    a = replicas.ctx("a")
    env = replicas.env("a", ECHO_VAULT=replicas.url,
                       ECHO_STATE_DIR=str(replicas.root / "a" / "state"),
                       ECHO_NOW="2026-03-01T09:30:00", PATH="/usr/bin:/bin")
    done = run_recorder("UserPromptSubmit", payload("hook-s", prompt="why is the build red"),
                        env)
    assert done.returncode == 0 and done.stdout == b"", done.stderr
    spool = list(Path(a.state_dir).rglob("*.jsonl"))
    assert len(spool) == 1, "the recorder wrote to A's state dir, as echo-memory keys it"
    b = replicas.ctx("b")
    assert ask_habitat(b, "build red", 5).data.records == ()  # not shipped yet
    ask_habitat(replicas.ctx("a"), "anything", 1)  # A's next habitat call ships it
    texts = [h.text for h in ask_habitat(b, "build red", 5).data.records]
    assert texts == ["why is the build red"]
    ask_habitat(replicas.ctx("a"), "anything", 1)  # shipped again: kept once
    assert len(session_records(b, "hook-s")) == 2  # the session record and the prompt


# --- learnings ---------------------------------------------------------------------------


def test_a_learning_stored_on_a_is_reinforced_on_b(replicas: Replicas) -> None:
    a, b = replicas.ctx("a"), replicas.ctx("b")
    first = store_learning(a, "Run the tests with pytest -n 2 before committing",
                           agent_id="ci")
    again = store_learning(b, "run the tests with pytest -n 2 before committing!",
                           agent_id="ci2")
    assert first.data.outcome == "stored" and again.data.outcome == "reinforced"
    rows = list_learnings(replicas.ctx("c")).data.learnings
    assert len(rows) == 1 and rows[0].recurrence == 2
    assert [p.agent_id for p in open_store(a).provenance(rows[0].id)] == ["ci", "ci2"]
    hits = ask_habitat(b, "pytest committing", 5).data.learnings
    assert [h["id"] for h in hits] == [rows[0].id] and hits[0]["score"] > 0
    decided = approve(b, rows[0].id)
    assert decided.ok
    assert open_store(a).get(rows[0].id).state == "approved"  # type: ignore[union-attr]
    assert not list((replicas.root / "a").rglob("learnings.sqlite"))


def test_two_replicas_storing_one_learning_at_once_make_one_row(replicas: Replicas) -> None:
    contexts = [replicas.ctx(name) for name in ("a", "b", "c", "d")]
    barrier = threading.Barrier(len(contexts))
    outcomes: list[str] = []

    def store(ctx: EchoContext) -> None:
        barrier.wait()
        outcomes.append(store_learning(ctx, "Deploys to staging need the VPN up",
                                       agent_id="x").data.outcome)

    threads = [threading.Thread(target=store, args=(ctx,)) for ctx in contexts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    rows = list_learnings(replicas.ctx("e")).data.learnings
    assert sorted(outcomes) == ["reinforced"] * 3 + ["stored"]
    assert len(rows) == 1 and rows[0].recurrence == 4


# --- patterns ----------------------------------------------------------------------------


def test_pattern_detection_on_b_sees_as_records(replicas: Replicas) -> None:
    a = replicas.ctx("a")
    calls = _records("make test", "make test", "make test", session="loop", kind="tool",
                     is_error=True, result="error: database locked")
    append_records(a, calls)
    b = replicas.ctx("b")
    summary = scan(b)
    assert summary.records == 3 and summary.new_patterns
    patterns = pattern_store(replicas.ctx("a")).list()
    assert [p.id for p in patterns] == list(summary.new_patterns)
    assert len(patterns[0].evidence) == 3
    assert scan(replicas.ctx("c")).new_evidence == 0  # a rescan elsewhere adds nothing
    flagged = flag_turn(replicas.ctx("c"), "loop", calls[0].id, "hangs every deploy")
    assert flagged.ok and flagged.data.flag_id is not None
    assert find_record(a, flagged.data.flag_id) is not None
    assert not list((replicas.root / "b").rglob("patterns.sqlite"))


def test_the_tables_live_in_the_vaults_schema(replicas: Replicas) -> None:
    import psycopg

    a = replicas.ctx("a")
    store_learning(a, "one learning", agent_id="x")
    append_records(a, _records("one record"))
    scan(a)
    schema = a.storage.schema  # type: ignore[attr-defined]
    with psycopg.connect(a.storage.target.conninfo) as conn:  # type: ignore[attr-defined]
        names = {r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))}
        versions = dict(conn.execute(
            f'SELECT store, version FROM "{schema}".habitat_versions').fetchall())
        data = conn.execute(f'SELECT data FROM "{schema}".habitat_records').fetchone()[0]
    assert {"habitat_records", "habitat_learnings", "habitat_patterns",
            "habitat_provenance", "habitat_evidence"} <= names
    assert set(versions) == {"records", "learnings", "patterns"}
    assert Record.from_json(data).text == "one record" and json.dumps(data)


def test_text_postgres_cannot_hold_comes_back_as_written(replicas: Replicas) -> None:
    a = replicas.ctx("a")
    odd = "nul \x00 here, and the escape \ue000 itself \ue0000 \ue0001"
    record = Record.new(ts=TS, kind="note", agent_id="agent \x00", session_id="s\x00",
                        text=odd, result=odd, tags=("t\x00",))
    append_records(a, [record])
    b = replicas.ctx("b")
    assert find_record(b, record.id) == record
    assert session_records(b, "s\x00") == [record]
    assert [h.id for h in ask_habitat(b, "escape", 5, agent_id="agent \x00").data.records] \
        == [record.id]
    text = "Mind the escape \ue000 and \ue0000 \ue0001"  # a learning holds no NUL
    stored = store_learning(a, text, agent_id="x", tags=("n",))
    got = open_store(b).get(stored.data.learning.id)
    assert got is not None and got.content == text
