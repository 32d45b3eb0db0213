"""Connections of a PostgreSQL vault: one ``psycopg_pool.ConnectionPool``, failing fast.

The pool opens no connection until one is asked for (``min_size=0``) and checks every
connection it hands out (``check_connection``: one round trip), so connections a server
restart broke are replaced, not used. Its reconnect back-off is turned off
(``reconnect_timeout=0``): each failed connection attempt is given up at once, so a
caller waiting for a connection learns within one attempt that the server is down, and
the first request after the server is back connects at once. The pool's own log lines
about failed attempts are silenced (the caller's error says it).

Error mapping (``pg_errors``): the server unreachable, shut down or a connection broken
mid-request -> ``BackendUnavailable`` (exit 69; writes go to the outbox); authentication
refused, a database that does not exist, or a connection option libpq refuses in the vault
URL (``?sslmode=bogus``, an unknown option, a non-number port) -> ``EchoError`` 78 (no
retry can help, so nothing is queued); the server refusing writes (read-only standby,
disk full, no privilege) -> ``VaultNotWritable``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from echo_core import BackendUnavailable, EchoError, ExitCode, VaultNotWritable

#: Seconds between two looks at whether the pool gave up connecting.
_SLICE = 0.05
#: SQLSTATE classes / codes meaning "fix the setup", not "wait for the server".
_NOT_CONFIGURED = ("28", "3D000")
#: The same, as libpq words a refused connection (which carries no SQLSTATE).
_REFUSED_WORDS = ("password authentication failed", "no pg_hba.conf entry",
                  "authentication failed", "does not exist", "password is required",
                  "permission denied for database")
#: How libpq words a connection option it refuses (fe-connect.c; no SQLSTATE, raised
#: before any server is asked): a bad value, an unknown option, a malformed URL or
#: ``key=value`` string.
_BAD_OPTION = re.compile(
    r'invalid \S+ value|invalid integer value|for connection option|invalid connection '
    r'option|invalid URI|invalid percent-encoded|in connection info string|invalid port '
    r'number|key/value separator|could not match \d+ (?:host names|port numbers)|'
    r'invalid require_auth|invalid SSL protocol version range|may not be used with sslrootcert'
    r'|when SSL support is not compiled in|could not parse network address')
#: SQLSTATEs meaning "the server takes no writes now".
_NOT_WRITABLE = ("25006", "53100", "42501")


def application_name() -> str:
    """What ``pg_stat_activity`` shows for our connections (the lock error names it)."""
    return f"echo-memory pid {os.getpid()} on {socket.gethostname()}"[:63]


def backend_error(exc: BaseException, where: str) -> EchoError:
    """The ``EchoError`` for a psycopg failure while talking to the vault ``where``."""
    state = getattr(exc, "sqlstate", None) or ""
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    refused = (not state and isinstance(exc, psycopg.OperationalError)
               and any(words in detail for words in _REFUSED_WORDS))
    if not state and isinstance(exc, (psycopg.OperationalError, psycopg.ProgrammingError)) \
            and _BAD_OPTION.search(detail):
        return EchoError(
            f"the vault URL of {where} has a connection option PostgreSQL's client library "
            f"refuses ({detail}); fix that option in the vault URL (libpq's connection "
            "parameters, e.g. sslmode=require)",
            ExitCode.NOT_CONFIGURED,
        )
    if refused or state.startswith(_NOT_CONFIGURED[0]) or state == _NOT_CONFIGURED[1]:
        return EchoError(
            f"PostgreSQL at {where} refused us ({detail}); check the user, password "
            "(PGPASSWORD or ~/.pgpass) and database name in the vault URL",
            ExitCode.NOT_CONFIGURED,
        )
    if state in _NOT_WRITABLE:
        return VaultNotWritable(f"PostgreSQL at {where} takes no writes now ({detail}); "
                                "point the vault at the primary, free disk space or grant "
                                "the privilege, then run `echo-memory flush`")
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout)):
        return BackendUnavailable(f"PostgreSQL at {where} is unreachable ({detail}); "
                                  "check that the server is running and the vault URL's "
                                  "host and port")
    return EchoError(f"PostgreSQL at {where} failed a request ({detail})", ExitCode.FAILURE)


class Connections:
    """The pooled connections of one vault (see the module docstring).

    ``size``: most connections at once; ``wait``: seconds a caller waits for a free
    connection while the server is up but every connection is busy."""

    def __init__(self, conninfo: str, where: str, *, size: int = 8, wait: float = 10.0,
                 connect_timeout: float = 5.0) -> None:
        self.conninfo = conninfo
        self.where = where
        self.wait = wait
        self.connect_timeout = connect_timeout
        self._failures = 0
        self._guard = threading.Lock()
        logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())
        logging.getLogger("psycopg.pool").propagate = False
        self._pool = ConnectionPool(
            conninfo, min_size=0, max_size=max(1, size), open=False, timeout=wait,
            reconnect_timeout=0.0, reconnect_failed=self._gave_up,
            check=ConnectionPool.check_connection, kwargs=self.connect_kwargs(),
            name=f"echo-memory {where}",
        )
        self._opened = False

    def connect_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of every connection (the pool's and the lock's)."""
        return {"connect_timeout": max(1, round(self.connect_timeout)),
                "application_name": application_name()}

    def _gave_up(self, pool: object) -> None:
        with self._guard:
            self._failures += 1

    def _open(self) -> None:
        if not self._opened:
            with self._guard:
                if not self._opened:
                    self._pool.open(wait=False)
                    self._opened = True

    def _get(self) -> Any:
        """A checked connection from the pool; ``BackendUnavailable`` (or 78) once a
        connection attempt fails, or after ``wait`` seconds with none free."""
        self._open()
        seen = self._failures
        deadline = time.monotonic() + self.wait
        while True:
            try:
                return self._pool.getconn(timeout=_SLICE)
            except PoolTimeout as exc:
                if self._failures != seen or time.monotonic() >= deadline:
                    raise self._diagnose(exc) from None

    def _diagnose(self, exc: PoolTimeout) -> EchoError:
        """Why no connection came: one direct attempt names the cause (refused, auth)."""
        try:
            with psycopg.connect(self.conninfo, **self.connect_kwargs()):
                pass
        except psycopg.Error as direct:
            return backend_error(direct, self.where)
        return backend_error(exc, self.where)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """A connection inside one transaction (committed when the block ends, rolled
        back on an error); psycopg failures become the errors of the module docstring."""
        conn = self._get()
        try:
            with conn.transaction():
                yield conn
        except psycopg.Error as exc:
            raise backend_error(exc, self.where) from None
        finally:
            self._pool.putconn(conn)

    def direct(self) -> Any:
        """A new connection outside the pool, in autocommit (the vault lock's)."""
        try:
            return psycopg.connect(self.conninfo, autocommit=True, **self.connect_kwargs())
        except psycopg.Error as exc:
            raise backend_error(exc, self.where) from None

    def close(self) -> None:
        """Close every pooled connection."""
        if self._opened:
            self._pool.close()
            self._opened = False
