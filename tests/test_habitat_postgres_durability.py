"""The habitat's record on a PostgreSQL vault under kills and outages.

* A recorder process killed with SIGKILL at random instants mid-batch (the group
  committer's path: several threads, one transaction per group) loses no acknowledged
  record and tears none: every acknowledged id is in the table once, every row parses.
* The server stopped: a record is queued in this machine's spool (``queued``, exit 0),
  as the core queues captures in its outbox; the learnings and every read are
  ``BackendUnavailable`` (exit 69), as any request to an unreachable vault. Restarted:
  the next habitat call ships the spool, each queued record once.

Also the writer process of the kill test: ``python -m tests.test_habitat_postgres_durability
URL STATE_DIR SEED THREADS`` appends through the committer until killed, printing each
id once its append returned.
"""

from __future__ import annotations

import datetime as _dt
import json
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from echo_core.context import EchoContext, create_context
from echo_core.errors import ExitCode
from echo_core.protocols import BackendUnavailable
from plugins.habitat.learnings_ops import list_learnings, store_learning
from plugins.habitat.loom_ask import ask_habitat
from plugins.habitat.patterns_scan import scan
from plugins.habitat.record import Record
from plugins.habitat.record_source import committer, record_source, session_records
from plugins.habitat.record_verbs import RecordParams, run_record
from tests.capture_kit import isolated_env
from tests.conftest import run_cli
from tests.habitat_record_kit import REPO
from tests.postgres_kit import (
    LocalCluster,
    drop_schema,
    local_cluster,
    new_schema_name,
    pg_schema_url,
    postgres_server,
    with_schema,
)

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures used by this module


def context(url: str, root: Path) -> EchoContext:
    return create_context(vault=url, state_dir=str(root / "state"),
                          env=isolated_env(root / "home"))


def _rows(ctx: EchoContext) -> list[Any]:
    """Every row's ``data`` of the record table, straight from the database."""
    import psycopg

    storage: Any = ctx.storage
    with psycopg.connect(storage.target.conninfo) as conn:
        return [r[0] for r in conn.execute(
            f'SELECT data FROM "{storage.schema}".habitat_records ORDER BY seq')]


# --- kill -9 mid-batch ---------------------------------------------------------------------


def _writer(url: str, root: Path, seed: int, threads: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "tests.test_habitat_postgres_durability",
                             url, str(root), str(seed), str(threads)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"
    return proc


def test_kill_9_mid_batch_loses_no_acknowledged_record_and_tears_none(
        pg_schema_url: str, tmp_path: Path) -> None:
    rng = random.Random(20)
    acknowledged: list[str] = []
    for round_ in range(5):
        proc = _writer(pg_schema_url, tmp_path / "writer", round_, 4)
        time.sleep(rng.uniform(0.3, 0.8))
        proc.kill()
        proc.wait(timeout=30)
        assert proc.stdout is not None
        acknowledged += [line.decode() for line in proc.stdout.read().split(b"\n")[:-1]]
        ctx = context(pg_schema_url, tmp_path / "reader")
        ids = [Record.from_json(data).id for data in _rows(ctx)]  # every row parses
        ctx.storage.close()  # type: ignore[attr-defined]
        assert len(ids) == len(set(ids)), "a record is doubled"
        missing = set(acknowledged) - set(ids)
        assert not missing, f"round {round_}: acknowledged but lost: {sorted(missing)[:3]}"
    assert len(acknowledged) > 50, "the writers never got going"
    assert not list((tmp_path / "writer").rglob("*.jsonl")), "nothing was queued locally"
    after = context(pg_schema_url, tmp_path / "after")
    last = Record.new(ts=_dt.datetime(2026, 3, 2), kind="note", agent_id="x",
                      session_id="after", text="after the kills")
    committer(after).append([last])
    assert [r.text for r in session_records(after, "after")] == ["after the kills"]
    after.storage.close()  # type: ignore[attr-defined]


def _writer_main(url: str, root: str, seed: int, threads: int) -> None:
    ctx = context(url, Path(root))
    append = committer(ctx).append
    out = threading.Lock()

    def run(thread: int) -> None:
        rng = random.Random(seed * 1000 + thread)
        n = 0
        while True:
            batch = [Record.new(ts=_dt.datetime(2026, 3, 1, 9, 30), kind="note",
                                agent_id=f"writer-{seed}", session_id=f"s{seed}-{thread}",
                                text=f"w{seed}-{thread}-{n}-{i} " + "x" * rng.choice((10, 9000)))
                     for i in range(rng.randint(1, 5))]
            assert not append(batch), "queued: the database was unreachable"
            with out:
                sys.stdout.write("".join(f"{r.id}\n" for r in batch))
                sys.stdout.flush()
            n += 1

    sys.stdout.write("ready\n")
    sys.stdout.flush()
    workers = [threading.Thread(target=run, args=(t,), daemon=True) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


# --- outage --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """A cluster of this module alone (the outage test stops and starts it)."""
    with local_cluster() as started:
        yield started


@pytest.fixture
def outage_url(cluster: LocalCluster) -> Iterator[str]:
    if not cluster.running:
        cluster.start()
    schema = new_schema_name()
    yield with_schema(cluster.url, schema)
    if not cluster.running:
        cluster.start()
    drop_schema(cluster.url, schema)


def test_an_outage_queues_records_refuses_the_rest_and_a_restart_ships_them_once(
        cluster: LocalCluster, outage_url: str, tmp_path: Path) -> None:
    a = context(outage_url, tmp_path / "a")
    assert run_record(a, RecordParams(session_id="s1", text="before the outage")).action \
        == "recorded"
    store_learning(a, "Restart the worker after a deploy", agent_id="ops")
    cluster.stop()
    down = context(outage_url, tmp_path / "a")
    queued = run_record(down, RecordParams(session_id="s1", text="during the outage"))
    assert queued.ok and queued.action == "queued" and "unreachable" in queued.message
    spool = [json.loads(line) for f in sorted((tmp_path / "a").rglob("*.jsonl"))
             for line in f.read_bytes().splitlines()]
    assert [r["text"] for r in spool] == ["during the outage"]  # on disk, fsync-ed
    for call in (lambda: store_learning(down, "x", agent_id="y"),
                 lambda: list_learnings(down), lambda: ask_habitat(down, "outage", 5),
                 lambda: scan(down)):
        with pytest.raises(BackendUnavailable):
            call()
    env = isolated_env(tmp_path / "a" / "home", ECHO_VAULT=outage_url,
                       ECHO_STATE_DIR=str(tmp_path / "cli-state"))
    refused = run_cli(["habitat", "learn", "Check the VPN first", "--agent-id", "ops"],
                      env=env)
    assert refused.returncode == int(ExitCode.UNAVAILABLE), refused.stderr
    assert "unreachable" in refused.stderr
    done = run_cli(["habitat", "record", "--session", "s2", "--json", "queued by the CLI"],
                   env=env)
    assert done.returncode == 0 and json.loads(done.stdout)["action"] == "queued"
    cluster.start()
    b = context(outage_url, tmp_path / "b")
    assert [r.text for r in session_records(b, "s1")] == ["before the outage"]
    up = context(outage_url, tmp_path / "a")
    ask_habitat(up, "outage", 5)  # A's first call that reaches the database ships
    assert [r.text for r in session_records(b, "s1")] == ["before the outage",
                                                           "during the outage"]
    after = run_cli(["habitat", "ask", "--json", "queued"], env=env)  # the CLI's state dir
    assert after.returncode == 0, after.stderr
    assert [h["text"] for h in json.loads(after.stdout)["records"]] == ["queued by the CLI"]
    ask_habitat(context(outage_url, tmp_path / "a"), "again", 5)
    texts = [r.text for r in record_source(b).records()]
    assert sorted(texts) == ["before the outage", "during the outage", "queued by the CLI"]
    assert len(list_learnings(b).data.learnings) == 1
    for ctx in (a, down, b, up):
        if "storage" in ctx.__dict__:
            ctx.storage.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    _writer_main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
