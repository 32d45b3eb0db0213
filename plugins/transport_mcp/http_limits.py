"""What a client may hold open on the HTTP server before it has sent a whole request.

The bearer token is checked once a request's head (request line and headers) has
arrived. uvicorn bounds the time of nothing before that: its only timer
(``timeout_keep_alive``) runs between requests and every byte received cancels it, so a
client that sent a partial head and then one header line every few seconds held its
connection, and a file descriptor, as long as it liked (3000 of them for 40 s in a
test): descriptors the vault's own files need too.

``guarded_protocol()`` (uvicorn's HTTP protocol with two bounds: its httptools one,
which uvicorn picks itself when httptools is installed, as our dependencies have it,
else its h11 one; ``serving.uvicorn_options`` gives it to every server process):

* a request head must arrive whole within ``HEAD_TIMEOUT`` seconds of its first byte
  (of the connection's opening, for the first request): otherwise the client gets 408
  and the connection is closed. The clock runs only while no request is being answered:
  a call that takes minutes (its response, streamed or not) is never cut, and the wait
  between requests is uvicorn's keep-alive timeout as before;
* at most ``max_connections()`` connections are open at once (half the process's
  file descriptor limit, at most ``MAX_CONNECTIONS``): one more is answered 503 and
  closed at once.

Closed connections are logged as one line a minute at most (a flood would otherwise
flood the log).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, ClassVar

log = logging.getLogger("echo_memory.mcp")
#: Seconds a request head may take from its first byte (a local client needs
#: milliseconds; a remote one on a slow link still well under this).
HEAD_TIMEOUT = 10.0
#: Most connections open at once in one server process.
MAX_CONNECTIONS = 1000
#: Seconds between two log lines about closed connections.
_LOG_EVERY = 60.0
_TIMED_OUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
              b"content-length: 29\r\nconnection: close\r\n\r\nrequest head took too long.\r\n")
_TOO_MANY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8"
             b"\r\ncontent-length: 28\r\nconnection: close\r\n\r\ntoo many open connections.\r\n")


def max_connections() -> int:
    """``MAX_CONNECTIONS``, or half the soft file descriptor limit when that is lower
    (the rest stays for the vault's files, the indexes and the log)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):  # pragma: no cover - no resource (Windows)
        return MAX_CONNECTIONS
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return MAX_CONNECTIONS
    return max(16, min(MAX_CONNECTIONS, soft // 2))


class _Closures:
    """Counts of connections closed by a bound, logged at most every ``_LOG_EVERY`` s."""

    def __init__(self) -> None:
        self.counts = {"timed_out": 0, "refused": 0}
        self.logged_at = 0.0

    def add(self, what: str) -> None:
        self.counts[what] += 1
        now = time.monotonic()
        if now - self.logged_at < _LOG_EVERY:
            return
        self.logged_at = now
        timed_out, refused = self.counts["timed_out"], self.counts["refused"]
        self.counts = {"timed_out": 0, "refused": 0}
        log.warning("http: closed %d connection(s) whose request head did not arrive "
                    "within %g s and refused %d over the limit of open connections",
                    timed_out, HEAD_TIMEOUT, refused)


class HeadGuard:
    """The two bounds (module docstring), mixed into one of uvicorn's HTTP protocols
    (``guarded_protocol``), whose ``connections``, ``transport``, ``loop`` and ``cycle``
    it reads. ``head_timeout`` / ``connection_limit``: class attributes, so a test can
    make a subclass with others."""

    head_timeout: ClassVar[float] = HEAD_TIMEOUT
    connection_limit: ClassVar[int | None] = None  # None: max_connections()
    closures: ClassVar[_Closures] = _Closures()
    _head_timer: asyncio.TimerHandle | None = None
    connections: Any
    transport: Any
    loop: Any
    cycle: Any

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        limit = self.connection_limit or max_connections()
        if len(self.connections) > limit:
            self.closures.add("refused")
            self.transport.write(_TOO_MANY)
            self.transport.close()
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)  # type: ignore[misc]
        if self._answering():
            self._disarm()  # a whole head arrived: the app has the request now
        elif self._head_timer is None and not self.transport.is_closing():
            self._arm()  # the first byte of the next request's head

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]

    def _answering(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _arm(self) -> None:
        self._head_timer = self.loop.call_later(self.head_timeout, self._head_expired)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_expired(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self._answering():
            return
        self.closures.add("timed_out")
        self.transport.write(_TIMED_OUT)  # no response is in flight: the last one ended
        self.transport.close()


def guarded_protocol() -> type[Any]:
    """uvicorn's httptools protocol with ``HeadGuard`` (its h11 one when httptools is
    not installed)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # pragma: no cover - httptools is a dependency
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return type("GuardedH11", (HeadGuard, H11Protocol), {})
    return type("GuardedHttpTools", (HeadGuard, HttpToolsProtocol), {})
