"""A throwaway PostgreSQL cluster for the tests, and a fresh schema per test (the cluster
itself is ``bench/postgres_kit.py``'s ``LocalCluster``, shared with the benches).

Where the server comes from (``postgres_server``, one per pytest process: each xdist
worker starts its own, which keeps the workers apart):

* ``ECHO_TEST_POSTGRES_URL`` set: that server (e.g. ``postgresql://postgres@127.0.0.1:5432/
  postgres``); nothing is started, and the tests that stop and start a server get a
  cluster of their own from the binaries if there are any (else they skip).
* else ``initdb`` / ``pg_ctl`` on ``PATH`` or under ``/usr/lib/postgresql/<n>/bin`` (the
  Debian / Ubuntu packages): ``initdb`` into a new temp folder, trust auth, started by
  ``pg_ctl`` on 127.0.0.1 on a free port with its unix socket in that folder, and stopped
  (``-m immediate``) and removed at the end of the session (and at exit, as a backstop).
  PostgreSQL refuses to run as root: as root the folder is handed to the ``postgres``
  user (which the distribution's package creates; ``nobody`` where there is none) and
  every server command runs as that user through ``runuser``.
* no binaries: the tests skip, unless ``ECHO_REQUIRE_POSTGRES=1`` (``.ci/run`` sets it):
  then they fail, so CI never passes by skipping them.

``pg_schema_url`` gives each test its own schema (``?schema=t_<random>``), dropped when
the test ends: tests are isolated however they are spread over workers.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from bench.postgres_kit import (
    _SERVER_OPTIONS,
    LocalCluster,
    drop_schema,
    free_port,
    new_schema_name,
    server_binaries,
    with_schema,
)

__all__ = ["REQUIRE_ENV", "URL_ENV", "_SERVER_OPTIONS", "LocalCluster", "close_storages",
           "drop_schema",
           "free_port", "local_cluster", "missing_postgres", "new_schema_name",
           "pg_schema_url", "postgres_server", "server_binaries",
           "terminate_lock_holder", "wait_until", "with_schema"]

URL_ENV = "ECHO_TEST_POSTGRES_URL"
REQUIRE_ENV = "ECHO_REQUIRE_POSTGRES"


def missing_postgres(reason: str) -> None:
    """Skip the test for ``reason``, or fail when ``ECHO_REQUIRE_POSTGRES=1``."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
    pytest.skip(reason)


@contextlib.contextmanager
def local_cluster() -> Iterator[LocalCluster]:
    """A started ``LocalCluster``, destroyed afterwards (skips / fails without binaries)."""
    bindir = server_binaries()
    if bindir is None:
        missing_postgres("no PostgreSQL server binaries (initdb, pg_ctl) are installed")
        raise AssertionError("unreachable")
    cluster = LocalCluster(bindir)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL server for this test process (module docstring)."""
    given = os.environ.get(URL_ENV, "").strip()
    if given:
        yield given
        return
    with local_cluster() as cluster:
        yield cluster.url


@pytest.fixture
def pg_schema_url(postgres_server: str) -> Iterator[str]:
    """A vault URL on ``postgres_server`` naming a schema of this test alone."""
    schema = new_schema_name()
    yield with_schema(postgres_server, schema)
    drop_schema(postgres_server, schema)


def wait_until(check: object, timeout: float = 10.0) -> None:
    """Poll the callable ``check`` until it returns true (AssertionError at timeout)."""
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def close_storages(contexts: Iterable[Any]) -> None:
    """Close the pooled storage of each context that opened one (``storage`` is made on
    first use, so a context that never touched the vault has none to close)."""
    for ctx in contexts:
        if "storage" in ctx.__dict__:
            ctx.storage.close()


def terminate_lock_holder(vault_url: str) -> int:
    """Cut the session holding the vault lock of ``vault_url`` (``pg_terminate_backend``,
    as ``idle_session_timeout`` or a proxy's idle timeout would) and wait until it is
    gone, so the lock is free; its server pid. AssertionError when nobody holds it."""
    import psycopg

    from plugins.storage_postgres.pg_schema import advisory_key
    from plugins.storage_postgres.pg_url import parse_vault_url

    target = parse_vault_url(vault_url)
    key = advisory_key("echo-memory vault lock", target.schema)
    with psycopg.connect(target.conninfo, autocommit=True) as admin:
        row = admin.execute(
            "SELECT pid FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid = %s AND objid = %s AND objsubid = 1",
            ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF)).fetchone()
        assert row is not None, f"nobody holds the vault lock of {vault_url}"
        gone = admin.execute("SELECT pg_terminate_backend(%s, 10000)", (row[0],)).fetchone()
        assert gone is not None and gone[0], f"server pid {row[0]} did not end"
    return int(row[0])
