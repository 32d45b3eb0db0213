"""One PostgreSQL vault spelled two ways is one vault on this machine: one identity, so
one state dir and one outbox — a write queued while the server was down under one
spelling is replayed exactly once by ``flush`` under another — and the outboxes an older
version left under its own (per-spelling) identity are adopted, not lost.

The tests that stop the server use a cluster of this module alone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from echo_core.config import state_dir_for
from echo_core.context import EchoContext, create_context
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.outbox import flush
from echo_core.pg_identity import legacy_identity  # a test may read the core module
from plugins.queue_outbox.outbox import OutboxQueue
from plugins.storage_postgres.pg_url import parse_vault_url
from tests.postgres_kit import LocalCluster, close_storages, local_cluster, new_schema_name

NOTE = "resources/concepts/spelled-twice.md"
BODY = "Queued while the server was down."


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """A cluster of this module alone (a test stops and starts it)."""
    with local_cluster() as started:
        yield started


@pytest.fixture
def schema(cluster: LocalCluster) -> Iterator[str]:
    """A fresh schema; the cluster is running when the test starts and after it."""
    if not cluster.running:
        cluster.start()
    yield new_schema_name()
    if not cluster.running:
        cluster.start()


def _context(url: str, tmp_path: Path) -> EchoContext:
    env = {"HOME": str(tmp_path / "home"), "ECHO_TODAY": "2026-03-01"}
    return create_context(vault=url, state_dir=str(tmp_path / "state"), env=env)


def _spellings(cluster: LocalCluster, schema: str) -> tuple[str, str]:
    """Two spellings of one vault: host, scheme, host case, option order differ."""
    one = (f"postgres://postgres@LocalHost:{cluster.port}/postgres"
           f"?connect_timeout=3&schema={schema}")
    other = (f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
             f"?schema={schema}&connect_timeout=3")
    return one, other


def _landed(ctx: EchoContext) -> int:
    return ctx.vault.storage.read(NOTE).count(BODY)


@pytest.mark.parametrize(("left", "right"), [
    ("postgresql://u@localhost:5432/db", "postgresql://u@127.0.0.1:5432/db"),
    ("postgresql://u@localhost:5432/db", "postgresql://u@localhost/db"),
    ("postgres://u@db.lan/db", "postgresql://u@db.lan:5432/db"),
    ("postgresql://u@db.lan:5432/db?sslmode=require&schema=s",
     "postgresql://u@db.lan:5432/db?schema=s&sslmode=require"),
    ("postgresql://u@db.lan:5432/", "postgresql://u@db.lan:5432"),
    ("postgresql://u@DB.Lan./db", "postgresql://u@db.lan/db"),
    ("postgresql://u@[::1]/db", "postgresql://u@127.0.0.1/db"),
    ("postgresql://u@[2001:DB8:0::1]/db", "postgresql://u@[2001:db8::1]/db"),
    ("postgresql://u:secret@db.lan/db", "postgresql://u@db.lan/db?password=other"),
    ("postgresql:///db?host=db.lan&port=6000&user=u", "postgresql://u@db.lan:6000/db"),
    ("postgresql://h/other?dbname=db", "postgresql://h/db"),
    ("postgresql://h1,H2:5433/db", "postgresql://h1:5432,h2:5433/db"),
])
def test_every_spelling_of_one_vault_has_one_identity(left: str, right: str) -> None:
    assert parse_vault_url(left).identity == parse_vault_url(right).identity


@pytest.mark.parametrize(("left", "right"), [
    ("postgresql://u@db.lan/db", "postgresql://u@db.lan:5433/db"),
    ("postgresql://u@db.lan/db", "postgresql://u@db.lan/db?schema=other"),
    ("postgresql://u@db.lan/db", "postgresql://u@db.lan/db2"),
    ("postgresql://u@db.lan/db", "postgresql://v@db.lan/db"),
    ("postgresql://u@db.lan/db", "postgresql://u@db2.lan/db"),
    ("postgresql:///db", "postgresql:///db?host=db.lan"),
    ("postgresql:///?service=prod", "postgresql:///?service=staging"),
    ("postgresql://u@db.lan/db", "postgresql://u@db.lan/db/"),
])
def test_different_vaults_keep_different_identities(left: str, right: str) -> None:
    assert parse_vault_url(left).identity != parse_vault_url(right).identity


def test_no_identity_names_a_password() -> None:
    for url in ("postgresql://u:s3cret@db.lan/db?password=s3cret2",
                "postgresql:///db?user=u&password=s3cret&host=db.lan"):
        target = parse_vault_url(url)
        assert "s3cret" not in target.identity
        assert "s3cret" not in (legacy_identity(url, target.schema) or "")


def test_a_capture_queued_under_one_spelling_lands_once_when_flushed_under_another(
    cluster: LocalCluster, schema: str, tmp_path: Path,
) -> None:
    one, other = _spellings(cluster, schema)
    first = _context(other, tmp_path)
    init_vault(first)
    close_storages([first])
    cluster.stop()
    away = _context(one, tmp_path)
    queued = capture(away, CaptureRequest(title="Spelled Twice", kind="concept", body=BODY))
    assert queued.action == "queued"
    cluster.start()
    back = _context(other, tmp_path)
    try:
        outcome = flush(back).data
        assert (outcome.synced, outcome.pending) == (1, 0), outcome
        assert _landed(back) == 1
        assert flush(back).data.synced == 0
        again = _context(one, tmp_path)
        assert flush(again).data.synced == 0
        close_storages([again])
        assert _landed(back) == 1
    finally:
        close_storages([away, back])


def _queue_as_an_older_version(state_dir: Path, identity: str | None,
                               request: CaptureRequest) -> str:
    """What an older version left: a capture record in the outbox of ``state_dir``
    (the vault seen there under ``identity`` when one is given)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    if identity is not None:
        (state_dir / "vault-seen.json").write_text(
            json.dumps({"identity": identity, "first_seen": "2026-02-01T09:00:00"}) + "\n")
    args = {"title": request.title, "kind": request.kind, "body": request.body}
    return OutboxQueue(str(state_dir)).put({"op": "capture", "args": args,
                                            "day": "2026-02-28"})


def _flushed_once(ctx: EchoContext, stray: Path) -> None:
    """A flush lands the one capture the stray outbox held, once, and empties it."""
    outcome = flush(ctx).data
    assert (outcome.synced, outcome.pending) == (1, 0), outcome
    assert _landed(ctx) == 1
    assert OutboxQueue(str(stray)).pending() == []


def test_an_outbox_an_older_version_kept_for_this_spelling_is_replayed_once(
    cluster: LocalCluster, schema: str, tmp_path: Path,
) -> None:
    url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres?schema={schema}"
    ctx = _context(url, tmp_path)
    try:
        init_vault(ctx)
        old = legacy_identity(url, schema)
        assert old is not None and old != ctx.storage.identity
        stray = state_dir_for(str(tmp_path / "state"), old)
        _queue_as_an_older_version(stray, None, CaptureRequest(
            title="Spelled Twice", kind="concept", body=BODY))
        _flushed_once(ctx, stray)
        assert flush(ctx).data.synced == 0 and _landed(ctx) == 1
    finally:
        close_storages([ctx])


def test_an_outbox_an_older_version_kept_for_another_spelling_is_replayed_once(
    cluster: LocalCluster, schema: str, tmp_path: Path,
) -> None:
    url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres?schema={schema}"
    ctx = _context(url, tmp_path)
    try:
        init_vault(ctx)
        old = legacy_identity(f"postgresql://postgres@[::1]:{cluster.port}/postgres"
                              f"?schema={schema}", schema)
        assert old is not None
        stray = state_dir_for(str(tmp_path / "state"), old)
        assert stray != ctx.state_dir
        assert old != parse_vault_url(url).former_identity  # found by what it recorded
        _queue_as_an_older_version(stray, old, CaptureRequest(
            title="Spelled Twice", kind="concept", body=BODY))
        elsewhere = f"postgresql://postgres@db.lan:{cluster.port}/postgres?schema={schema}"
        unrelated = state_dir_for(str(tmp_path / "state"), elsewhere)
        _queue_as_an_older_version(unrelated, elsewhere, CaptureRequest(
            title="Not Ours", kind="concept", body="Another vault's write."))
        _flushed_once(ctx, stray)
        assert len(OutboxQueue(str(unrelated)).pending()) == 1
        assert flush(ctx).data.synced == 0 and _landed(ctx) == 1
    finally:
        close_storages([ctx])


def test_a_moved_record_an_older_flush_landed_before_it_was_killed_lands_once(
    cluster: LocalCluster, schema: str, tmp_path: Path,
) -> None:
    url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres?schema={schema}"
    ctx = _context(url, tmp_path)
    try:
        init_vault(ctx)
        former = parse_vault_url(url).former_identity
        assert former is not None
        stray = state_dir_for(str(tmp_path / "state"), former)
        request = CaptureRequest(title="Spelled Twice", kind="concept", body=BODY)
        rid = _queue_as_an_older_version(stray, None, request)
        # the older version's flush replayed it (under the op id derived from its record
        # id) and was killed before it marked the record done
        assert capture(ctx, request, op_id=f"outbox-{rid}").ok
        assert _landed(ctx) == 1
        replayed = flush(ctx).data.items
        assert [(item.outcome, item.detail) for item in replayed] == [("synced", "unchanged")]
        assert _landed(ctx) == 1
        assert ctx.queue is not None and ctx.queue.pending() == []
        assert OutboxQueue(str(stray)).pending() == []
        lines = (ctx.state_dir / "outbox.ndjson").read_text().splitlines()
        moved = [json.loads(line) for line in lines if '"record"' in line]
        assert [record["op_id"] for record in moved] == [f"outbox-{rid}"]
    finally:
        close_storages([ctx])


def test_a_url_naming_no_host_gives_a_conninfo_libpq_reads() -> None:
    from psycopg.conninfo import conninfo_to_dict

    target = parse_vault_url("postgresql:///mem?host=/run/postgresql&schema=s")
    assert conninfo_to_dict(target.conninfo) == {"dbname": "mem", "host": "/run/postgresql"}
    assert target.identity == "postgresql://%2Frun%2Fpostgresql/mem?schema=s"
    assert parse_vault_url("postgresql://%2frun%2Fpostgresql%2F/mem?schema=s").identity == (
        target.identity)
