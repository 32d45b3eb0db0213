"""The vault lock of a PostgreSQL vault: a session-level advisory lock.

Taking it opens a dedicated connection (outside the pool), tries
``pg_try_advisory_lock(key)`` and, when it is held, waits in the server's queue
(``pg_advisory_lock`` under a ``lock_timeout`` of the time left: granted as soon as the
holder lets go, waiters served in order) until ``timeout`` passes (then exit 75, naming
the holder from ``pg_stat_activity``: its application name says which process on which
host). The key is derived from the vault's schema, so every process on every
machine using the same database and schema contends for the same lock, and no other
vault does. Releasing unlocks and closes the connection.

Unlike a lock file, it cannot go stale: the server drops a session's advisory locks when
the session ends, so a holder that dies (killed, its machine gone) frees the lock as soon
as the server notices the connection closed. Within one process the lock is re-entrant
per thread and threads exclude each other (``ReentrantHold``, one per vault identity).

A holder whose connection is cut while it holds the lock (a server restart,
``pg_terminate_backend``, ``idle_session_timeout``, a proxy's idle timeout) loses it, and
another process may take it. So the storage's writes made by the thread holding the lock
run on the lock's own connection (``held_transaction``): a write commits only while that
session, and so the lock, is alive; once it is cut every further write of the hold
raises ``BackendUnavailable`` saying the lock was lost (nothing of that write lands; the
core then queues a capture in the outbox and leaves a half-done operation's intent for
``recover_pending``, as for any cut connection), and the release warns
(``StaleLockWarning``). The lock is not taken again behind the caller's back: what it read
under the lost lock may be stale.
"""

from __future__ import annotations

import contextlib
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import psycopg

from echo_core import (
    BackendUnavailable,
    EchoError,
    LockHeldError,
    ProcessRegistry,
    ReentrantHold,
    StaleLockWarning,
)
from plugins.storage_postgres.pg_connect import Connections, backend_error
from plugins.storage_postgres.pg_schema import advisory_key


class AdvisoryLock:
    """The process-wide lock state of one vault (see the module docstring)."""

    def __init__(self, identity: str, schema: str) -> None:
        self.identity = identity
        self.key = advisory_key("echo-memory vault lock", schema)
        self._hold = ReentrantHold(f"of {identity}")
        self._conn: Any = None
        self._owner: int | None = None  # the thread holding it

    def hold(self, connections: Connections,
             timeout: float) -> contextlib.AbstractContextManager[None]:
        """Hold the vault lock for the ``with`` block; exit 75 after ``timeout`` s."""
        return self._hold.hold(timeout, lambda deadline: self._acquire(connections, deadline),
                               lambda token: self._release())

    def _acquire(self, connections: Connections, deadline: float) -> str:
        conn = connections.direct()
        try:
            granted = conn.execute("SELECT pg_try_advisory_lock(%s)", (self.key,)).fetchone()
            if not (granted and granted[0]):
                self._wait(conn, deadline)
            self._conn, self._owner = conn, threading.get_ident()
            return "held"
        except EchoError:
            conn.close()
            raise
        except psycopg.Error as exc:
            conn.close()
            raise backend_error(exc, connections.where) from None

    def _wait(self, conn: Any, deadline: float) -> None:
        """Wait in the server's queue for the lock (``pg_advisory_lock`` under a
        ``lock_timeout`` of the time left): granted the moment its holder lets go, in
        the order the waiters came; exit 75 naming the holder when the time is up."""
        left_ms = max(1, int((deadline - time.monotonic()) * 1000))
        try:
            conn.execute(f"SET lock_timeout = {left_ms}")
            conn.execute("SELECT pg_advisory_lock(%s)", (self.key,))
            conn.execute("SET lock_timeout = 0")
        except psycopg.errors.LockNotAvailable:
            raise LockHeldError(
                f"vault lock of {self.identity} is held by {self._holder(conn)}; "
                "wait for it to finish and retry (the server frees it as soon as "
                "that process ends or loses its connection)") from None

    def _holder(self, conn: Any) -> str:
        """Who holds the lock, as ``pg_stat_activity`` tells (best effort)."""
        classid, objid = (self.key >> 32) & 0xFFFFFFFF, self.key & 0xFFFFFFFF
        try:
            row = conn.execute(
                "SELECT a.application_name, a.client_addr::text, a.pid, "
                "extract(epoch FROM now() - a.state_change) FROM pg_catalog.pg_locks l "
                "JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid "
                "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s "
                "AND l.objid = %s AND l.objsubid = 1 LIMIT 1",
                (classid, objid)).fetchone()
        except psycopg.Error:
            row = None
        if not row:
            return "another process"
        name, addr, pid, idle = row
        who = name or "a client"
        return (f"{who} (server pid {pid}, from {addr or 'a local socket'}, "
                f"{float(idle or 0):.1f} s in its current state)")

    def held_transaction(self, where: str) -> contextlib.AbstractContextManager[Any] | None:
        """A transaction on the lock's own connection when the calling thread holds the
        lock (None when it does not): what commits in it committed while the lock was
        held. Once that connection is cut, ``BackendUnavailable`` saying the lock was lost
        (module docstring); other psycopg failures map as in ``backend_error``."""
        if self._conn is None or self._owner != threading.get_ident():
            return None
        return self._transaction(self._conn, where)

    @contextlib.contextmanager
    def _transaction(self, conn: Any, where: str) -> Iterator[Any]:
        try:
            with conn.transaction():
                yield conn
        except psycopg.Error as exc:
            if not conn.closed:
                raise backend_error(exc, where) from None
            raise BackendUnavailable(
                f"the vault lock of {self.identity} was lost while held: its connection to "
                f"PostgreSQL was cut ({type(exc).__name__}), so another process may hold it "
                "now; this write was not made, nor is any other under it") from None

    def _release(self) -> None:
        conn, self._conn, self._owner = self._conn, None, None
        if conn is None:
            return
        try:
            freed = conn.execute("SELECT pg_advisory_unlock(%s)", (self.key,)).fetchone()
            if not (freed and freed[0]):
                raise BackendUnavailable("the lock was not held any more")
        except (psycopg.Error, BackendUnavailable) as exc:
            warnings.warn(
                f"vault lock of {self.identity} was lost while held ({exc}); its "
                "connection to PostgreSQL was cut, so another process may have taken it",
                StaleLockWarning,
                stacklevel=4,
            )
        finally:
            with contextlib.suppress(psycopg.Error):
                conn.close()


_REGISTRY: ProcessRegistry[AdvisoryLock] = ProcessRegistry()


def advisory_lock_for(identity: str, schema: str) -> AdvisoryLock:
    """The process-wide ``AdvisoryLock`` of the vault ``identity``."""
    return _REGISTRY.get(identity, lambda: AdvisoryLock(identity, schema))
