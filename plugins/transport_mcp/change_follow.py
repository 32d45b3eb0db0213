"""Live freshness for a running ``serve`` on a shared vault with a change log (the
PostgreSQL backend; issue 20): follow the vault's change notifications and catch up by
change number, so a note written on another machine is recallable here within a second,
with no query per call while nothing changes.

``ChangeFollower`` runs in one background thread. It asks the storage for a listener
(the storage's optional ``change_listener()``: ``open()``, ``wait(timeout) -> int |
None``, ``close()``; duck-typed, as the storage is another plugin's), opens it, catches
up once (``echo_core.catch_up``: what changed while nobody listened), calls
``on_connect`` (the server replays its outbox there: captures queued while the database
was away land once it is back), sets ``ready``, then catches up after each
notification. A lost connection (``wait`` or a catch-up
raising) clears ``ready`` and reconnects after a back-off (``first_backoff_s``, doubling
to ``MAX_BACKOFF_S``), catching up again once it listens; a failure is logged as a
warning once, and again only when it changes (its repeats while the database stays away
are debug lines). Each catch-up runs holding
``serial`` (shared with the scheduled jobs, as the folder watcher's batches are).

While ``ready`` is set the server's contexts skip their per-call check (``LiveFlag``);
while it is clear they catch up themselves, at most once a second. Nothing here raises
into the server; ``stop()`` ends the thread within about ``WAIT_S``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from plugins.transport_mcp.background import BackgroundThread

log = logging.getLogger("echo_memory.mcp")
#: Seconds one wait for a notification lasts (how soon ``stop()`` is noticed).
WAIT_S = 0.25
#: The longest wait between two attempts to reconnect: how long a replica may take to
#: notice the database is back, and so to start replaying the captures it queued
#: meanwhile (``on_connect``). It was 30 s, which after a long outage added up to 30 s
#: before the first queued capture landed; an attempt costs one refused connection, so
#: one every few seconds is cheap (and its repeats are logged at debug level).
MAX_BACKOFF_S = 4.0


def can_follow(storage: Any) -> bool:
    """Whether ``storage`` offers a change listener and a change log to catch up from."""
    from echo_core import has_change_log

    return callable(getattr(storage, "change_listener", None)) and has_change_log(storage)


class ChangeFollower(BackgroundThread):
    """Follows ``storage``'s changes and calls ``catch_up()`` (module docstring).
    ``ready``: listening and caught up; ``catch_ups`` / ``reconnects``: counters."""

    thread_name = "echo-change-follow"

    def __init__(self, listener: Callable[[], Any], catch_up: Callable[[], object], *,
                 serial: threading.Lock | None = None, first_backoff_s: float = 0.5,
                 wait_s: float = WAIT_S,
                 on_connect: Callable[[], object] | None = None) -> None:
        super().__init__()
        self.ready = threading.Event()
        self.catch_ups = 0
        self.reconnects = 0
        self._listener = listener
        self._catch_up = catch_up
        self._on_connect = on_connect
        self._serial = serial or threading.Lock()
        self._first_backoff = first_backoff_s
        self._wait = wait_s

    def _caught_up(self) -> None:
        with self._serial:
            self._catch_up()
        self.catch_ups += 1

    def run(self) -> None:
        """The thread: listen, catch up, reconnect after a failure (module docstring)."""
        backoff = self._first_backoff
        reported = ""  # the failure last logged as a warning; its repeats are debug lines
        while not self.stopping.is_set():
            listener = None
            try:
                listener = self._listener()
                listener.open()
                self._caught_up()
                if self._on_connect is not None:
                    self._on_connect()
                self.ready.set()
                log.info("change feed: following %s", getattr(listener, "channel", "changes"))
                backoff, reported = self._first_backoff, ""
                while not self.stopping.is_set():
                    if listener.wait(self._wait) is not None:
                        self._caught_up()
            except Exception as exc:  # noqa: BLE001 - the follower never takes the server down
                self.ready.clear()
                problem = f"{type(exc).__name__}: {getattr(exc, 'message', exc)}"
                log.log(logging.DEBUG if problem == reported else logging.WARNING,
                        "change feed: interrupted (%s); following again in %.1f s",
                        problem, backoff)
                reported = problem
                if self.stopping.wait(backoff):
                    return
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                self.reconnects += 1
            finally:
                if listener is not None:
                    listener.close()
        self.ready.clear()
