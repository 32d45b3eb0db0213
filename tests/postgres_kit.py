"""A throwaway PostgreSQL cluster for the tests, and a fresh schema per test.

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

import atexit
import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

URL_ENV = "ECHO_TEST_POSTGRES_URL"
REQUIRE_ENV = "ECHO_REQUIRE_POSTGRES"
#: Settings for a throwaway test cluster: small and fast. ``fsync=off`` loses data only
#: when the machine crashes; commits stay synchronous, so a committed write survives the
#: ``pg_ctl stop -m immediate`` (a server crash) the outage tests use.
_SERVER_OPTIONS = ("-c fsync=off -c full_page_writes=off "
                   "-c shared_buffers=16MB -c max_connections=200 "
                   "-c dynamic_shared_memory_type=mmap")


def server_binaries() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``, or None."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(Path(p).parent.parent.name)
                        if Path(p).parent.parent.name.isdigit() else 0)
    return Path(candidates[-1]).parent if candidates else None


def missing_postgres(reason: str) -> None:
    """Skip the test for ``reason``, or fail when ``ECHO_REQUIRE_POSTGRES=1``."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _server_user() -> str | None:
    """The user the server runs as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("running as root and neither a postgres nor a nobody user exists")


class LocalCluster:
    """A cluster in its own temp folder, on ``port`` (see the module docstring)."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.user = _server_user()
        self.root = Path(tempfile.mkdtemp(prefix="echo-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.running = False
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "-E", "UTF8", "--locale=C", "--no-sync")
        atexit.register(self.destroy)

    @property
    def url(self) -> str:
        """The superuser's URL of the ``postgres`` database over TCP."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              cwd=self.root, check=False)
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{tool} failed ({done.returncode}):\n{done.stdout}\n"
                               f"{done.stderr}\n{tail}")

    def start(self) -> None:
        """Start the server and wait until it takes connections (a busy port: another)."""
        for attempt in range(5):
            try:
                self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"),
                          "-w", "-t", "60", "-o",
                          f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                          + _SERVER_OPTIONS, "start")
            except RuntimeError:
                if attempt == 4:
                    raise
                self.port = _free_port()
                continue
            self.running = True
            return

    def stop(self) -> None:
        """Stop the server at once (connections are cut, as by a crash)."""
        if self.running:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
            self.running = False

    def destroy(self) -> None:
        """Stop the server and remove its folder (idempotent)."""
        with contextlib.suppress(Exception):
            self.stop()
        if self.root.exists():
            shutil.rmtree(self.root, ignore_errors=True)


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


def with_schema(url: str, schema: str) -> str:
    """``url`` with the ``schema`` query option set."""
    return f"{url}{'&' if '?' in url else '?'}schema={schema}"


def new_schema_name() -> str:
    """A fresh schema name for one test."""
    return f"t_{secrets.token_hex(6)}"


def drop_schema(url: str, schema: str) -> None:
    """Drop ``schema`` and everything in it (best effort: the server may be down)."""
    import psycopg

    with contextlib.suppress(psycopg.Error), psycopg.connect(
            url, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


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
