"""Following a PostgreSQL vault's changes as they commit: ``LISTEN`` on its channel.

Every committing write sends ``NOTIFY <channel>, '<seq>'`` in its transaction
(``pg_writes``), so a listener hears of a change when it commits, not before.
``ChangeListener`` holds one connection of its own (outside the pool, autocommit) that
does nothing but listen: ``open()`` connects and ``LISTEN``s, ``wait(timeout)`` blocks
until a notification arrives (then drains every one already there) or ``timeout``
passes, and says the highest change number heard (None: nothing came).

Failure contract: a lost connection (the server restarted, the network cut) raises
``BackendUnavailable`` from ``wait`` and closes the connection; ``open()`` again
reconnects. Notifications sent while no connection listened are not replayed by the
server: the caller catches up by change number after each ``open`` (``changes_since``).
A connection that dies silently (no reset reaches us) is found by a ``SELECT 1`` after
``keepalive`` seconds without a notification.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, Self

import psycopg
from psycopg import sql

from echo_core import BackendUnavailable
from plugins.storage_postgres.pg_connect import Connections, backend_error

#: Seconds of quiet after which the listening connection is checked with a round trip.
KEEPALIVE = 5.0


class ChangeListener:
    """A ``LISTEN`` on ``channel`` over a connection of its own (module docstring)."""

    def __init__(self, connections: Connections, channel: str, *,
                 keepalive: float = KEEPALIVE) -> None:
        self.channel = channel
        self.keepalive = keepalive
        self._connections = connections
        self._conn: Any = None
        self._quiet_since = time.monotonic()

    @property
    def listening(self) -> bool:
        """Whether a connection is open and listening."""
        return self._conn is not None

    def open(self) -> None:
        """Connect and ``LISTEN`` (a no-op when listening); ``BackendUnavailable`` (or
        78) when the server cannot be reached. Changes committed before this returns
        are not notified: catch up after it."""
        if self._conn is not None:
            return
        conn = self._connections.direct()
        try:
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
        except psycopg.Error as exc:
            with contextlib.suppress(psycopg.Error):
                conn.close()
            raise backend_error(exc, self._connections.where) from None
        self._conn = conn
        self._quiet_since = time.monotonic()

    def wait(self, timeout: float) -> int | None:
        """Block up to ``timeout`` seconds for a notification; then take every one already
        there and return the highest change number heard (a payload that is not a number
        counts as 0), or None when none came. ``BackendUnavailable`` when the connection
        is lost (it is closed: ``open`` reconnects)."""
        if self._conn is None:
            self.open()
        conn = self._conn
        heard: int | None = None
        try:
            for note in conn.notifies(timeout=timeout, stop_after=1):
                heard = max(heard or 0, _number(note.payload))
            if heard is not None:  # drain what else is queued, without waiting
                for note in conn.notifies(timeout=0.0):
                    heard = max(heard, _number(note.payload))
                self._quiet_since = time.monotonic()
            elif time.monotonic() - self._quiet_since >= self.keepalive:
                conn.execute("SELECT 1")
                self._quiet_since = time.monotonic()
        except psycopg.Error as exc:
            self.close()
            raise BackendUnavailable(
                f"the change listener's connection to {self._connections.where} was lost "
                f"({str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__})"
            ) from None
        return heard

    def close(self) -> None:
        """Close the connection (idempotent)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _number(payload: str) -> int:
    try:
        return int(payload)
    except ValueError:
        return 0
