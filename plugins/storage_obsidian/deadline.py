"""The overall deadline of one request of the Obsidian backend, enforced on every socket
operation: connecting, the TLS handshake, sending, and each read of the answer's status
line, headers and body.

httpx's timeouts bound each socket operation on its own (a read timeout restarts with
every byte), so a server trickling its headers or its body holds the caller for as long
as it likes. ``wrap_transport`` wraps the transport's network backend so that every
operation run while ``deadline(at)`` is active in the calling thread gets at most the
time left until ``at`` (``time.monotonic``), and one started after it raises the
matching httpcore timeout (mapped by httpx to its ``ConnectTimeout`` / ``ReadTimeout`` /
``WriteTimeout``). Outside ``deadline`` nothing changes.

The backend is reached through httpx's and httpcore's private attributes (``_pool``,
``_network_backend``); were they to move, ``wrap_transport`` returns False and the
deadline is only checked between chunks of the body (the tests of the deadline fail).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

_LOCAL = threading.local()


@contextlib.contextmanager
def deadline(at: float) -> Iterator[None]:
    """Bound every socket operation of this thread by ``at`` (``time.monotonic()``)."""
    previous = getattr(_LOCAL, "at", None)
    _LOCAL.at = at
    try:
        yield
    finally:
        _LOCAL.at = previous


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    """``timeout`` shortened to the time left before this thread's deadline; ``expired``
    when none is left."""
    at: float | None = getattr(_LOCAL, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise expired("the request's overall deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream:
    """An httpcore network stream whose operations keep to the thread's deadline."""

    def __init__(self, stream: Any, httpcore: Any) -> None:
        self._stream = stream
        self._httpcore = httpcore

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self._stream.read(max_bytes, _left(timeout, self._httpcore.ReadTimeout))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, self._httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> _Stream:
        inner = self._stream.start_tls(
            ssl_context, server_hostname, _left(timeout, self._httpcore.ConnectTimeout)
        )
        return _Stream(inner, self._httpcore)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend:
    """An httpcore network backend whose streams keep to the thread's deadline."""

    def __init__(self, backend: Any, httpcore: Any) -> None:
        self._backend = backend
        self._httpcore = httpcore

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None, socket_options: Any = None) -> _Stream:
        stream = self._backend.connect_tcp(
            host, port, _left(timeout, self._httpcore.ConnectTimeout), local_address,
            socket_options,
        )
        return _Stream(stream, self._httpcore)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> _Stream:
        stream = self._backend.connect_unix_socket(
            path, _left(timeout, self._httpcore.ConnectTimeout), socket_options
        )
        return _Stream(stream, self._httpcore)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def wrap_transport(transport: Any) -> bool:
    """Make ``transport`` (an ``httpx.HTTPTransport``) keep to ``deadline``; False when
    its network backend cannot be reached (see the module docstring)."""
    import httpcore

    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None:
        return False
    pool._network_backend = _Backend(backend, httpcore)  # type: ignore[union-attr]
    return True
