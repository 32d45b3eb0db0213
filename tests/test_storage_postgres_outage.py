"""PostgresStorage when the server goes away: a clear ``BackendUnavailable`` (exit 69),
nothing torn by a write cut mid-transaction, reconnection once the server is back, the
advisory lock freed with its session, and the core's outbox path end to end.

Every test here stops and starts a cluster of this module's own (not the session's
shared one), so other tests never see the outage."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from echo_core.context import create_context
from echo_core.errors import EchoError, ExitCode
from echo_core.locking import StaleLockWarning
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.outbox import flush
from echo_core.protocols import BackendUnavailable
from echo_core.testing.storage_contract import StorageSpec, probe_lock_in_child
from plugins.storage_postgres import open_postgres_storage
from plugins.storage_postgres.pg_storage import PostgresStorage
from plugins.storage_postgres.pg_url import parse_vault_url
from tests.conftest import CLI
from tests.postgres_kit import LocalCluster, local_cluster, new_schema_name, with_schema

FACTORY = "plugins.storage_postgres:open_postgres_storage"


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """A cluster of this module alone (the tests stop and start it)."""
    with local_cluster() as started:
        yield started


@pytest.fixture
def url(cluster: LocalCluster) -> Iterator[str]:
    """A fresh schema on the module's cluster, which is running when the test starts
    and is started again if a test left it stopped."""
    if not cluster.running:
        cluster.start()
    yield with_schema(cluster.url, new_schema_name())
    if not cluster.running:
        cluster.start()


@pytest.fixture
def storage(url: str) -> Iterator[PostgresStorage]:
    opened = open_postgres_storage(url, {"timeout": 5, "connect_timeout": 2})
    opened.create()
    yield opened
    opened.close()


def test_a_stopped_server_is_backend_unavailable_quickly_and_a_restart_reconnects(
    cluster: LocalCluster, storage: PostgresStorage,
) -> None:
    storage.write("kept.md", "kept\n")
    cluster.stop()
    for call in (storage.ping, lambda: storage.read("kept.md"),
                 lambda: storage.write("new.md", "x\n"), storage.list,
                 lambda: storage.append_line("kept.md", "- y")):
        started = time.monotonic()
        with pytest.raises(BackendUnavailable) as caught:
            call()
        assert time.monotonic() - started < 3.0
        assert caught.value.code == ExitCode.UNAVAILABLE
        assert "unreachable" in caught.value.message and storage.identity in caught.value.message
    cluster.start()
    storage.ping()  # the same storage object: the pool replaced its broken connections
    assert storage.read("kept.md") == "kept\n"
    storage.write("new.md", "x\n")
    assert storage.list() == ["kept.md", "new.md"]


def test_a_write_cut_mid_transaction_is_unavailable_and_leaves_the_old_file(
    cluster: LocalCluster, storage: PostgresStorage, url: str,
) -> None:
    storage.write("n.md", "old\n")
    before = storage.last_change()
    blocker = psycopg.connect(parse_vault_url(url).conninfo)
    schema = parse_vault_url(url).schema
    blocker.execute(f'SELECT last FROM "{schema}".echo_change_counter FOR UPDATE')
    outcome: list[BaseException | None] = []

    def write() -> None:
        try:
            storage.write_many({"n.md": "new\n", "other.md": "other\n"})
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    time.sleep(0.3)  # the write is inside its transaction, waiting for the counter
    assert not outcome
    cluster.stop()
    writer.join(timeout=10)
    blocker.close()
    assert len(outcome) == 1 and isinstance(outcome[0], BackendUnavailable)
    cluster.start()
    assert storage.read("n.md") == "old\n"
    assert not storage.exists("other.md")
    assert storage.last_change() == before


def test_the_lock_of_a_killed_holder_is_free_at_once(storage: PostgresStorage, url: str,
                                                    tmp_path: Path) -> None:
    code = ("import sys, time; from plugins.storage_postgres import open_postgres_storage\n"
            "s = open_postgres_storage(sys.argv[1], {})\n"
            "with s.lock(timeout=5):\n    print('held', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, url], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        status, _ = probe_lock_in_child(StorageSpec(FACTORY, (url, {})), 0.2)
        assert status == f"error {int(ExitCode.LOCK_HELD)}"
    finally:
        holder.kill()
        holder.wait()
    status, message = probe_lock_in_child(StorageSpec(FACTORY, (url, {})), 5.0)
    assert status == "acquired", message


def test_a_lock_whose_connection_is_cut_warns_at_release(
    cluster: LocalCluster, storage: PostgresStorage,
) -> None:
    def hold_through_a_restart() -> None:
        with storage.lock(timeout=1.0):
            cluster.stop()
            cluster.start()

    with pytest.warns(StaleLockWarning, match="lost while held"):
        hold_through_a_restart()
    with storage.lock(timeout=2.0):
        pass


def test_a_lock_asked_of_a_stopped_server_is_unavailable(
    cluster: LocalCluster, storage: PostgresStorage,
) -> None:
    cluster.stop()
    with pytest.raises(BackendUnavailable), storage.lock(timeout=1.0):
        pass


def test_wrong_database_is_not_configured(cluster: LocalCluster) -> None:
    storage = open_postgres_storage(cluster.url.rsplit("/", 1)[0] + "/no_such_db", {})
    with pytest.raises(EchoError) as caught:
        storage.ping()
    assert caught.value.code == ExitCode.NOT_CONFIGURED
    storage.close()


def test_captures_queue_while_the_server_is_down_and_land_once(
    cluster: LocalCluster, url: str, tmp_path: Path,
) -> None:
    env = {"HOME": str(tmp_path / "home"), "ECHO_TODAY": "2026-03-01"}
    ctx = create_context(vault=url, state_dir=str(tmp_path / "state"), env=env)
    init_vault(ctx)
    assert capture(ctx, CaptureRequest(title="Vantage Systems", kind="company",
                                       body="Vendor.")).ok
    cluster.stop()
    requests = [CaptureRequest(title=f"Topic {n}", kind="concept", body=f"Body {n}.")
                for n in range(5)]
    requests.append(CaptureRequest(title="Vantage Systems", kind="company",
                                   body="Renewal in April."))
    assert [capture(ctx, r).action for r in requests] == ["queued"] * 6
    cli_env = dict(os.environ, HOME=str(tmp_path / "home"), ECHO_VAULT=url,
                   ECHO_STATE_DIR=str(tmp_path / "state"))
    down = subprocess.run([*CLI, "get", "resources/companies/vantage-systems.md"],
                          capture_output=True, text=True, env=cli_env, timeout=60,
                          check=False)
    assert down.returncode == int(ExitCode.UNAVAILABLE), down.stderr
    assert "unreachable" in down.stderr
    cluster.start()
    outcome = flush(ctx).data
    assert (outcome.synced, outcome.pending) == (6, 0)
    storage = ctx.vault.storage
    assert storage.read("resources/companies/vantage-systems.md").count("Renewal in April.") == 1
    assert len([p for p in storage.list("resources/concepts") if "README" not in p]) == 5
    assert flush(ctx).data.synced == 0
