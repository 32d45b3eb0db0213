"""Server replicas of one PostgreSQL vault under faults (issue 20 acceptance): a replica
SIGKILLed mid-capture tears nothing and loses no acknowledged write; PostgreSQL restarted
under load: the replicas reconnect and the captures queued in their outboxes meanwhile
land exactly once.

Each replica is a real ``echo-memory serve`` process with its own port and state dir,
driven through the plain ``POST /call/<tool>`` route. The cluster is this module's own
(it is stopped and started)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.postgres_kit import free_port
from echo_core import invoke
from echo_core.context import create_context
from echo_core.entities import EntityStore
from echo_core.frontmatter import parse_frontmatter
from echo_core.ops.init import init_vault
from tests.postgres_kit import LocalCluster, local_cluster, new_schema_name, wait_until, with_schema

REPO = Path(__file__).resolve().parent.parent
TOKEN = "replica-test-token-" + "5" * 20
TODAY = "2026-03-01"
MARK = re.compile(r"\bmk\d+x\d+q\b")


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """A cluster of this module alone (the restart test stops and starts it)."""
    with local_cluster() as started:
        yield started


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    env.update({"HOME": str(tmp_path / "home"), "ECHO_TODAY": TODAY,
                "ECHO_CONFIG": str(tmp_path / "none.toml"), "ECHO_MCP_TOKEN": TOKEN,
                "ECHO_SERVE_SWEEP_MINUTES": "0", "PYTHONPATH": str(REPO),
                "PYTHONWARNINGS": "ignore"})
    return env


class Replica:
    """One ``echo-memory serve`` process on its own port and state dir."""

    def __init__(self, vault: str, state: Path, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.state = state
        self._log = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from plugins.cli_start import run; run()",
             "serve", "--port", str(self.port), "--vault", vault, "--state-dir", str(state)],
            env=env, stdout=self._log, stderr=subprocess.STDOUT, cwd=REPO)
        self.log = log
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited: {log.read_text()}")
            with contextlib.suppress(OSError):
                if self.call("echo_recall", {"query": "warmup"}, timeout=5)[0] == 200:
                    return
            if time.monotonic() > deadline:
                raise AssertionError(f"serve did not come up: {log.read_text()}")
            time.sleep(0.1)

    def call(self, tool: str, args: dict[str, Any], timeout: float = 30) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request("POST", f"/call/{tool}", json.dumps(args),
                         {"Authorization": f"Bearer {TOKEN}",
                          "Content-Type": "application/json"})
            answer = conn.getresponse()
            return answer.status, json.loads(answer.read() or b"null")
        finally:
            conn.close()

    def stop(self, sig: int = signal.SIGINT) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


@pytest.fixture
def vault(cluster: LocalCluster, tmp_path: Path) -> Iterator[str]:
    """An initialised vault in a fresh schema (the cluster started if a test stopped it)."""
    if not cluster.running:
        cluster.start()
    url = with_schema(cluster.url, new_schema_name())
    init_vault(create_context(vault=url, state_dir=str(tmp_path / "init"), env=_env(tmp_path)))
    yield url
    if not cluster.running:
        cluster.start()


@pytest.fixture
def replicas(vault: str, tmp_path: Path) -> Iterator[list[Replica]]:
    """Two serve replicas (A, B) of ``vault``."""
    started: list[Replica] = []
    try:
        for name in ("a", "b"):
            started.append(Replica(vault, tmp_path / f"state-{name}", _env(tmp_path),
                                   tmp_path / f"serve-{name}.log"))
        yield started
    finally:
        for replica in started:
            replica.stop()


def _notes(vault: str, tmp_path: Path) -> dict[str, str]:
    storage = create_context(vault=vault, state_dir=str(tmp_path / "audit"),
                             env=_env(tmp_path)).vault.storage
    return {p: storage.read(p) for p in storage.list("resources/concepts")
            if not p.endswith("README.md")}


def _body(marker: str, title: str) -> str:
    return f"Fact {marker} about {title} kept whole."


def _check_whole(notes: dict[str, str]) -> Counter[str]:
    """Every note parses; every marker found stands in its whole sentence. The count of
    each marker over the vault."""
    counts: Counter[str] = Counter()
    for path, text in notes.items():
        _fm, _, error = parse_frontmatter(text)
        assert error is None, f"torn note {path}: {error}"
        assert text.rstrip().endswith(("## Related", "]]")), path
        for marker in MARK.findall(text):
            assert re.search(rf"Fact {marker} about .+ kept whole\.", text), (path, marker)
            counts[marker] += 1
    return counts


def test_a_replica_killed_mid_capture_tears_nothing_and_loses_no_acknowledged_write(
    replicas: list[Replica], vault: str, tmp_path: Path,
) -> None:
    a, b = replicas
    title = "Kestrel Harbor"
    assert b.call("echo_capture", {"title": title, "kind": "concept",
                                   "body": "Seeded by replica b."})[1]["action"] == "created"
    attempts: dict[str, tuple[str, str]] = {}  # marker -> (title, kind of capture)
    acked: set[str] = set()
    guard = threading.Lock()
    rng = random.Random(20261203)
    words = ["".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(9)) for _ in range(40)]

    def client(index: int) -> None:
        n = 0
        while True:
            n += 1
            marker = f"mk{index}x{n}q"
            new = index % 2 == 1 and n <= len(words) // 4
            name = words[index * 10 + n - 1].title() if new else title
            with guard:
                attempts[marker] = (name, "create" if new else "update")
            try:
                status, data = a.call("echo_capture", {"title": name, "kind": "concept",
                                                       "body": _body(marker, name)})
            except OSError:
                return  # the replica is gone: this capture is not acknowledged
            if status == 200 and data.get("ok") and data.get("action") in ("created", "updated"):
                with guard:
                    acked.add(marker)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    wait_until(lambda: len(acked) >= 6, 30)
    time.sleep(rng.uniform(0.05, 0.25))
    a.proc.send_signal(signal.SIGKILL)  # mid-capture: four clients keep it busy
    a.proc.wait()
    for thread in threads:
        thread.join(30)
    unacked = {m: attempts[m] for m in attempts if m not in acked}
    assert acked and unacked
    counts = _check_whole(_notes(vault, tmp_path))
    assert all(counts[m] == 1 for m in acked), "an acknowledged capture is lost or doubled"
    assert all(counts[m] <= 1 for m in unacked)
    # the advisory lock of the killed replica is free at once; a retry lands once
    for marker, (name, _kind) in sorted(unacked.items()):
        status, data = b.call("echo_capture", {"title": name, "kind": "concept",
                                               "body": _body(marker, name)})
        assert status == 200 and data["ok"], data
    notes = _notes(vault, tmp_path)
    counts = _check_whole(notes)
    for marker, (_name, kind) in attempts.items():
        if marker in acked or kind == "update":
            assert counts[marker] == 1, (marker, kind)  # an update's retry never doubles
        else:  # a create whose note landed unacknowledged gets the retry as an update
            assert counts[marker] in (1, 2), marker
    heading = re.compile(r"^# (.+)$", re.MULTILINE)
    headings = Counter(m.group(1) for t in notes.values() if (m := heading.search(t)))
    assert all(n == 1 for n in headings.values()), headings  # one note per title
    storage = create_context(vault=vault, state_dir=str(tmp_path / "audit"),
                             env=_env(tmp_path)).vault.storage
    for entity in EntityStore(storage).load().entities.values():
        assert storage.exists(entity.path), entity.path


#: Captures one client queues while the database is away before it waits for it.
QUEUED_EACH = 15


def test_postgres_restarted_under_load_replicas_reconnect_and_queued_captures_land_once(
    cluster: LocalCluster, replicas: list[Replica], vault: str, tmp_path: Path,
) -> None:
    acked: dict[str, str] = {}  # marker -> action (created / updated / queued)
    title_of: dict[str, str] = {}
    errors: list[str] = []
    guard = threading.Lock()
    stop = threading.Event()
    titles = ["Cobalt Fjord", "Amber Quarry", "Velvet Tundra"]
    # While the database is away a client queues at most QUEUED_EACH captures, then waits
    # for it: replay runs at ~40 captures a second, and unbounded clients queue ~160 a
    # second, so a slow restart (a loaded CI machine) queued more than 30 s of replay.
    back = threading.Event()

    def client(index: int) -> None:
        replica = replicas[index % len(replicas)]
        n = queued_here = 0
        while not stop.is_set():
            if queued_here >= QUEUED_EACH and not back.is_set():
                back.wait(0.05)
                continue
            n += 1
            marker = f"mk{index}x{n}q"
            name = titles[(index + n) % len(titles)]
            title_of[marker] = name
            try:
                status, data = replica.call("echo_capture", {
                    "title": name, "kind": "concept", "body": _body(marker, name)})
            except OSError as exc:
                with guard:
                    errors.append(f"{marker}: {exc!r}")
                continue
            with guard:
                if status == 200 and data.get("ok"):
                    acked[marker] = str(data.get("action"))
                    queued_here += acked[marker] == "queued"
                else:
                    errors.append(f"{marker}: {status} {json.dumps(data)[:200]}")
            time.sleep(0.02)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    try:
        wait_until(lambda: len(acked) >= 8, 30)
        cluster.stop()
        wait_until(lambda: list(acked.values()).count("queued") >= 4, 30)
        cluster.start()
        back.set()
        time.sleep(1.0)
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    queued = [m for m, action in acked.items() if action == "queued"]
    assert queued and len(acked) > len(queued)
    assert not errors, errors[:5]  # nothing refused: down, captures queue; up, they land

    def landed() -> bool:
        counts = Counter(MARK.findall("\n".join(_notes(vault, tmp_path).values())))
        return all(counts[m] >= 1 for m in acked)

    wait_until(landed, 30)  # each replica's follower reconnects and replays its outbox
    counts = _check_whole(_notes(vault, tmp_path))
    assert {m: counts[m] for m in acked if counts[m] != 1} == {}  # each exactly once
    for replica in replicas:  # nothing left to replay, and a replay again changes nothing
        ctx = create_context(vault=vault, state_dir=str(replica.state), env=_env(tmp_path))
        outcome = invoke(ctx, "flush").data
        assert (outcome.synced, outcome.pending) == (0, 0)
    last = queued[-1]
    path = f"resources/concepts/{title_of[last].lower().replace(' ', '-')}.md"
    for replica in replicas:  # each replica answers from a current index after the outage
        status, data = replica.call("echo_recall", {"query": last})
        assert status == 200 and [h["path"] for h in data["primary"]][:1] == [path], data
