"""A throwaway PostgreSQL cluster for the tests and the benches (no pytest here).

``LocalCluster(server_binaries())``: ``initdb`` into a new temp folder, trust auth,
started by ``pg_ctl`` on 127.0.0.1 on a free port with its unix socket in that folder
(``start``), stopped at once (``stop``: ``-m immediate``, connections cut as by a crash)
and removed (``destroy``, also at exit as a backstop). The binaries come from ``PATH`` or
``/usr/lib/postgresql/<n>/bin`` (the Debian / Ubuntu packages). PostgreSQL refuses to
run as root: as root the folder is handed to the ``postgres`` user (which the
distribution's package creates; ``nobody`` where there is none) and every server command
runs as that user through ``runuser``.

``with_schema`` / ``new_schema_name`` / ``drop_schema``: one vault per schema of a
server. ``tests/postgres_kit.py`` adds the pytest fixtures on top.
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
from pathlib import Path

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


def free_port() -> int:
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
        self.port = free_port()
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
                self.port = free_port()
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
