"""PostgresStorage: the storage contract against a real server (a throwaway cluster, or
``ECHO_TEST_POSTGRES_URL``), the plugin and its URL, exact bytes, the change log, and
concurrent writers. Outages and restarts: ``test_storage_postgres_outage.py``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from types import ModuleType

import psycopg
import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.testing import PluginContract
from echo_core.testing.storage_contract import StorageContract, StorageSpec, probe_lock_in_child
from plugins import storage_postgres
from plugins.storage_postgres import open_postgres_storage, register_storage
from plugins.storage_postgres.pg_storage import PostgresStorage
from plugins.storage_postgres.pg_url import parse_vault_url
from tests.postgres_kit import pg_schema_url, postgres_server

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures used by this module
FACTORY = "plugins.storage_postgres:open_postgres_storage"


@pytest.fixture
def pg_storage(pg_schema_url: str) -> Iterator[PostgresStorage]:
    """A storage on a schema of this test alone (created; closed afterwards)."""
    storage = open_postgres_storage(pg_schema_url, {})
    storage.create()
    yield storage
    storage.close()


class TestPostgresStorage(StorageContract):
    """The lock is a session advisory lock; the child process opens the same URL."""

    @pytest.fixture
    def storage(self, pg_storage: PostgresStorage) -> PostgresStorage:
        return pg_storage

    @pytest.fixture
    def storage_factory_spec(self, pg_schema_url: str) -> StorageSpec:
        return StorageSpec(FACTORY, (pg_schema_url, {}))


class TestStoragePostgresPlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return storage_postgres

    @pytest.fixture
    def plugin_name(self) -> str:
        return "storage_postgres"


# --- URL and factory ----------------------------------------------------------------------


def test_both_schemes_are_registered() -> None:
    seen: dict[str, object] = {}
    register_storage(lambda name, factory: seen.setdefault(name, factory))
    assert set(seen) == {"postgresql", "postgres"}


def test_url_gives_schema_conninfo_and_a_password_free_identity() -> None:
    target = parse_vault_url("postgres://ada:s3cret@db.lan:6543/mem?schema=team_a&sslmode=require")
    assert target.schema == "team_a"
    assert target.identity == "postgresql://ada@db.lan:6543/mem?schema=team_a"
    assert "s3cret" in target.conninfo and "sslmode=require" in target.conninfo
    assert "schema" not in target.conninfo
    assert parse_vault_url("postgresql://h/db").schema == "echo_memory"
    assert parse_vault_url("postgresql://h/db", {"schema": "other"}).schema == "other"


@pytest.mark.parametrize("url", ["postgresql://h/db?schema=Bad-Name", "postgresql://h/db?schema=",
                                 "http://h/db", "postgresql://h:port/db",
                                 'postgresql://h/db?schema=x";drop'])
def test_bad_urls_and_schema_names_are_usage_errors(url: str) -> None:
    with pytest.raises(EchoError) as caught:
        parse_vault_url(url)
    assert caught.value.code == ExitCode.USAGE


def test_bad_option_is_not_configured() -> None:
    with pytest.raises(EchoError) as caught:
        open_postgres_storage("postgresql://h/db", {"pool_size": "many"})
    assert caught.value.code == ExitCode.NOT_CONFIGURED


def test_opening_imports_no_driver_until_a_vault_is_opened() -> None:
    import subprocess
    import sys

    code = ("import sys; import plugins.storage_postgres; "
            "print('psycopg' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


# --- bytes, shapes, the change log --------------------------------------------------------


def test_any_bytes_round_trip_exactly(pg_storage: PostgresStorage) -> None:
    blob = bytes(range(256)) * 3 + b"\x00\r\n\r"
    pg_storage.write_bytes("attachments/blob.bin", blob)
    assert pg_storage.read_bytes("attachments/blob.bin") == blob
    assert pg_storage.stat("attachments/blob.bin").size == len(blob)
    with pytest.raises(EchoError) as caught:
        pg_storage.read("attachments/blob.bin")
    assert caught.value.code == ExitCode.FAILURE and "UTF-8" in caught.value.message


def test_a_path_is_never_both_file_and_folder(pg_storage: PostgresStorage) -> None:
    pg_storage.write("a/b.md", "x\n")
    for bad in ("a", "a/b.md/c.md"):
        with pytest.raises(EchoError) as caught:
            pg_storage.write(bad, "y\n")
        assert caught.value.code == ExitCode.USAGE
    with pytest.raises(EchoError):
        pg_storage.write_many({"n.md": "1", "n.md/x.md": "2"})
    assert pg_storage.list() == ["a/b.md"]
    assert pg_storage.last_change() == 1


def test_every_write_and_delete_is_one_numbered_change_and_a_notify(
    pg_storage: PostgresStorage, pg_schema_url: str,
) -> None:
    conninfo = parse_vault_url(pg_schema_url).conninfo
    with psycopg.connect(conninfo, autocommit=True) as listener:
        listener.execute(f'LISTEN "{pg_storage.channel}"')
        pg_storage.write("x.md", "1\n")
        pg_storage.append_line("x.md", "- two")
        assert pg_storage.append_line("x.md", "- two") is False  # no change, no number
        pg_storage.write_many({"y.md": "y\n", "z.md": b"z\n"})
        pg_storage.delete("x.md")
        payloads = [n.payload for n in listener.notifies(timeout=2.0, stop_after=4)]
    assert payloads == ["1", "2", "4", "5"]
    assert pg_storage.changes_since(0) == [(1, "x.md", "w"), (2, "x.md", "w"),
                                           (3, "y.md", "w"), (4, "z.md", "w"),
                                           (5, "x.md", "d")]
    assert pg_storage.changes_since(3) == [(4, "z.md", "w"), (5, "x.md", "d")]
    assert pg_storage.last_change() == 5


def test_write_many_is_all_or_nothing(pg_storage: PostgresStorage) -> None:
    pg_storage.write("folder/kept.md", "kept\n")
    with pytest.raises(EchoError):
        pg_storage.write_many({"new.md": "new\n", "folder": "a file where a folder is\n"})
    assert pg_storage.list() == ["folder/kept.md"]


def test_list_escapes_nothing_and_scans_only_the_folder(pg_storage: PostgresStorage) -> None:
    for path in ("a_b/x.md", "a%b/y.md", "ab/z.md", "a/1.md", "a-/2.md", "a0/3.md"):
        pg_storage.write(path, "x\n")
    assert pg_storage.list("a_b") == ["a_b/x.md"]
    assert pg_storage.list("a%b") == ["a%b/y.md"]
    assert pg_storage.list("a") == ["a/1.md"]


# --- concurrency --------------------------------------------------------------------------


def test_concurrent_appends_of_one_line_append_it_once(pg_schema_url: str) -> None:
    storages = [open_postgres_storage(pg_schema_url, {}) for _ in range(4)]
    storages[0].create()
    results: list[bool] = []
    barrier = threading.Barrier(8)

    def append(storage: PostgresStorage, line: str) -> None:
        barrier.wait()
        results.append(storage.append_line("log.md", line))

    threads = [threading.Thread(target=append, args=(storages[i % 4], f"- line {i % 2}"))
               for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 6 + [True] * 2
    assert sorted(storages[0].read("log.md").splitlines()) == ["- line 0", "- line 1"]
    for storage in storages:
        storage.close()


def test_concurrent_writers_lose_nothing(pg_schema_url: str) -> None:
    storages = [open_postgres_storage(pg_schema_url, {}) for _ in range(4)]
    storages[0].create()

    def write(n: int) -> None:
        for i in range(25):
            storages[n].write(f"w{n}/{i}.md", f"{n}-{i}\n")

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(storages[0].list()) == 100
    seqs = [seq for seq, _, _ in storages[0].changes_since(0)]
    assert seqs == list(range(1, 101))
    for storage in storages:
        storage.close()


def test_lock_held_elsewhere_names_the_holder(pg_storage: PostgresStorage,
                                              pg_schema_url: str) -> None:
    with pg_storage.lock(timeout=1.0):
        status, message = probe_lock_in_child(StorageSpec(FACTORY, (pg_schema_url, {})), 0.2)
    assert status == f"error {int(ExitCode.LOCK_HELD)}"
    assert "echo-memory pid" in message


def test_other_schemas_neither_see_nor_lock_each_other(postgres_server: str) -> None:
    from tests.postgres_kit import drop_schema, new_schema_name, with_schema

    names = [new_schema_name(), new_schema_name()]
    one, two = (open_postgres_storage(with_schema(postgres_server, n), {}) for n in names)
    try:
        one.write("only-one.md", "1\n")
        assert two.list() == []
        with one.lock(timeout=1.0):
            status, _ = probe_lock_in_child(
                StorageSpec(FACTORY, (with_schema(postgres_server, names[1]), {})), 0.5)
        assert status == "acquired"
    finally:
        one.close()
        two.close()
        for name in names:
            drop_schema(postgres_server, name)


def test_a_schema_from_a_newer_plugin_is_refused(pg_storage: PostgresStorage,
                                                 pg_schema_url: str) -> None:
    with psycopg.connect(parse_vault_url(pg_schema_url).conninfo, autocommit=True) as conn:
        conn.execute(f'UPDATE "{pg_storage.schema}".echo_schema_version SET version = 99')
    newer = open_postgres_storage(pg_schema_url, {})
    with pytest.raises(EchoError) as caught:
        newer.list()
    assert caught.value.code == ExitCode.NOT_CONFIGURED and "upgrade" in caught.value.message
    newer.close()


def test_no_server_binaries_skip_here_and_fail_where_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests import postgres_kit

    monkeypatch.setattr(postgres_kit, "server_binaries", lambda: None)
    monkeypatch.setenv(postgres_kit.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception), postgres_kit.local_cluster():
        pass
    monkeypatch.delenv(postgres_kit.REQUIRE_ENV)
    with pytest.raises(pytest.skip.Exception), postgres_kit.local_cluster():
        pass
