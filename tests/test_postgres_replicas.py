"""Replicas of one PostgreSQL vault (issue 20, parts 2 and 3): each machine's local recall
index and entity cache kept current by change number, and concurrent captures of one
title from separate machines making one note.

A "replica" here is a context (or a process) with a state dir of its own on the same
vault, as a separate machine would have."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from echo_core import catch_up, invoke
from echo_core.context import EchoContext, create_context
from echo_core.entities import EntityStore
from echo_core.ops.change_feed import SEQ_KEY, applied_change
from echo_core.ops.init import init_vault
from echo_core.ops.vault_changes import manifest_of
from plugins.storage_postgres.pg_url import parse_vault_url
from plugins.transport_mcp.change_follow import ChangeFollower, can_follow
from plugins.transport_mcp.vault_watch import LiveFlag
from tests.postgres_kit import pg_schema_url, postgres_server, wait_until

__all__ = ["pg_schema_url", "postgres_server"]

REPO = Path(__file__).resolve().parent.parent
TODAY = "2026-03-01"


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "ECHO_TODAY": TODAY,
            "ECHO_NOW": f"{TODAY}T10:00:00", "ECHO_CONFIG": str(tmp_path / "none.toml")}


@pytest.fixture
def replicas(pg_schema_url: str, tmp_path: Path) -> Iterator[tuple[EchoContext, EchoContext]]:
    """Two replicas (own state dirs) of one initialised PostgreSQL vault."""
    env = _env(tmp_path)
    a = create_context(vault=pg_schema_url, state_dir=str(tmp_path / "a"), env=env)
    b = create_context(vault=pg_schema_url, state_dir=str(tmp_path / "b"), env=env)
    init_vault(a)
    yield a, b
    for ctx in (a, b):
        ctx.vault.storage.close()  # type: ignore[attr-defined]


def _recalled(ctx: EchoContext, query: str) -> list[str]:
    found = invoke(ctx, "recall", {"query": query}).data
    return [h.path for h in (*found.primary, *found.linked)]


def _capture(ctx: EchoContext, title: str, body: str) -> Any:
    return invoke(ctx, "capture", {"title": title, "kind": "concept", "body": body})


def test_a_capture_on_one_replica_is_recalled_on_another_by_catching_up(
    replicas: tuple[EchoContext, EchoContext],
) -> None:
    a, b = replicas
    assert _recalled(b, "zebra") == []  # b's first check: its baseline and change number
    storage: Any = b.vault.storage
    assert applied_change(manifest_of(b)) == storage.last_change()
    done = _capture(a, "Zebra Crossing", "A striped zebra walkway.")
    assert done.action == "created"
    assert _recalled(b, "zebra") == [done.data.path]
    assert applied_change(manifest_of(b)) == storage.last_change()
    again = _capture(b, "Zebra Crossing", "Repainted in spring.")
    assert again.action == "updated" and again.data.path == done.data.path
    assert done.data.path in _recalled(a, "repainted")
    assert catch_up(b).found == 0  # nothing new since: one query, nothing synced


def test_an_unchanged_vault_costs_one_query_and_a_deleted_note_leaves_the_other_replica(
    replicas: tuple[EchoContext, EchoContext],
) -> None:
    a, b = replicas
    path = _capture(a, "Quokka Island", "Small marsupials everywhere.").data.path
    assert _recalled(b, "quokka") == [path]
    storage: Any = b.vault.storage
    asked: list[int] = []
    real = storage.changes_since

    def counted(seq: int, limit: int = 10000) -> list[tuple[int, str, str]]:
        asked.append(seq)
        return real(seq, limit)  # type: ignore[no-any-return]

    storage.changes_since = counted
    assert catch_up(b).found == 0 and asked == []  # only last_change was asked
    a.vault.storage.delete(path)
    assert catch_up(b).gone == (path,)
    assert asked and _recalled(b, "quokka") == []


def test_a_restarted_or_gapped_change_log_falls_back_to_the_full_scan(
    replicas: tuple[EchoContext, EchoContext], pg_schema_url: str,
) -> None:
    a, b = replicas
    _recalled(b, "anything")
    manifest = manifest_of(b)
    manifest.set(**{SEQ_KEY: str(10**9)})  # the log is behind us: it was restarted
    path = _capture(a, "Lyrebird Song", "Mimics chainsaws.").data.path
    changes = catch_up(b)
    assert path in changes.new
    assert applied_change(manifest) == b.vault.storage.last_change()  # type: ignore[attr-defined]
    # the log no longer holds the changes after ours (pruned): the scan finds them
    target = parse_vault_url(pg_schema_url)
    other = _capture(a, "Axolotl Tank", "Regrows its limbs.").data.path
    with psycopg.connect(target.conninfo, autocommit=True) as conn:
        conn.execute(f'DELETE FROM "{target.schema}".echo_changes WHERE seq > %s',
                     (applied_change(manifest),))
    assert other in catch_up(b).new
    assert _recalled(b, "axolotl") == [other]


def test_a_long_lived_replica_follows_notifications_without_a_query_per_call(
    replicas: tuple[EchoContext, EchoContext], pg_schema_url: str, tmp_path: Path,
) -> None:
    a, b = replicas
    live = LiveFlag()
    b.live_watched = live  # type: ignore[attr-defined]
    contexts = threading.local()
    storage: Any = b.vault.storage
    assert can_follow(storage)

    def own_context() -> EchoContext:  # the follower thread's own, as in serve
        if not hasattr(contexts, "ctx"):
            contexts.ctx = create_context(vault=pg_schema_url, state_dir=str(tmp_path / "b"),
                                          env=dict(b.env))
        return contexts.ctx  # type: ignore[no-any-return]

    follower = ChangeFollower(storage.change_listener, lambda: catch_up(own_context()),
                              first_backoff_s=0.1)
    live.watcher = follower
    follower.start()
    try:
        wait_until(follower.ready.is_set, 10)
        asked: list[int] = []
        real = storage.last_change

        def counted() -> int:
            asked.append(1)
            return real()  # type: ignore[no-any-return]

        storage.last_change = counted
        assert _recalled(b, "pangolin") == []
        assert asked == []  # b's own calls ask nothing while the follower follows
        path = _capture(a, "Pangolin Scales", "Keratin armour.").data.path
        started = time.monotonic()
        wait_until(lambda: _recalled(b, "pangolin") == [path], 1.0)
        assert time.monotonic() - started <= 1.0
        # the listening connection cut (a server restart, say): it reconnects, catches up
        target = parse_vault_url(pg_schema_url)
        with psycopg.connect(target.conninfo, autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE query LIKE 'LISTEN%%' AND pid <> pg_backend_pid()")
            late = _capture(a, "Narwhal Tusk", "A long tooth.").data.path
        wait_until(lambda: follower.reconnects >= 1 and follower.ready.is_set(), 10)
        wait_until(lambda: _recalled(b, "narwhal") == [late], 5)
        assert asked == []
    finally:
        follower.stop()
    assert not follower.alive


_WORKER = """
import json, sys, time
from echo_core import invoke
from echo_core.context import create_context
spec = json.loads(sys.argv[1])
ctx = create_context(vault=spec["vault"], state_dir=spec["state"], env=spec["env"])
while time.time() < spec["start_at"]:
    time.sleep(0.005)
out = []
for body in spec["bodies"]:
    done = invoke(ctx, "capture", {"title": spec["title"], "kind": "concept", "body": body})
    out.append([done.action, done.data.path])
print(json.dumps(out))
"""


def test_concurrent_captures_of_one_title_on_separate_machines_make_one_note(
    pg_schema_url: str, tmp_path: Path,
) -> None:
    env = _env(tmp_path)
    init_vault(create_context(vault=pg_schema_url, state_dir=str(tmp_path / "s0"), env=env))
    machines, per = 4, 4
    start_at = time.time() + 3.0  # every process imported and connected by then
    procs = []
    for m in range(machines):
        spec = {"vault": pg_schema_url, "state": str(tmp_path / f"m{m}"), "env": env,
                "title": "Shared Harbour Plan", "start_at": start_at,
                "bodies": [f"Fact m{m}n{n}z from machine {m}." for n in range(per)]}
        procs.append(subprocess.Popen(
            [sys.executable, "-c", _WORKER, json.dumps(spec)], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO), "PYTHONWARNINGS": "ignore"}))
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.extend(json.loads(out))
    assert sorted(action for action, _ in results).count("created") == 1
    assert {path for _, path in results} == {"resources/concepts/shared-harbour-plan.md"}

    def check(ctx: EchoContext) -> None:
        storage = ctx.vault.storage
        notes = [p for p in storage.list("resources/concepts") if not p.endswith("README.md")]
        assert notes == ["resources/concepts/shared-harbour-plan.md"]
        text = storage.read(notes[0])
        for m in range(machines):
            for n in range(per):
                assert text.count(f"m{m}n{n}z") == 1, (m, n)
        named = [e for e in EntityStore(storage).load().entities.values()
                 if e.title == "Shared Harbour Plan"]
        assert [e.path for e in named] == [notes[0]]

    fresh = create_context(vault=pg_schema_url, state_dir=str(tmp_path / "late"), env=env)
    check(fresh)
    invoke(fresh, "sweep", {"fast": True})  # a new machine's first sweep adds nothing
    for m in range(machines):  # nor does each machine catching up
        catch_up(create_context(vault=pg_schema_url, state_dir=str(tmp_path / f"m{m}"), env=env))
    again = _capture(fresh, "Shared Harbour Plan", "One more from a late machine.")
    assert again.action == "updated"
    check(fresh)
