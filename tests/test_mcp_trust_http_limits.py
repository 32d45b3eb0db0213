"""The HTTP server bounds what a client holds before it has sent a whole request (the
token is checked only then): ``slowloris.py PORT 3000 40`` held 3000 connections with
partial headers for 40 s, uvicorn having no timeout for a request's head. Now
(``http_limits.guarded_protocol``, what ``serving.uvicorn_options`` runs): a head that is not
whole within the head timeout is answered 408 and closed, trickled or not; a call that
takes longer than that is never cut; one connection over the limit is answered 503.

Each test runs a real uvicorn server on a loopback port (a short head timeout); waits
are for the server's answer, bounded by socket timeouts, never sleeps timing a result."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from plugins.transport_mcp.serving import uvicorn_options

HEAD_TIMEOUT = 0.3
WAIT = 10.0  # far above HEAD_TIMEOUT: a server that never closes fails, not hangs
REQUEST = b"GET /%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """``/slow``: answers after four head timeouts; anything else at once."""
    if scope["type"] != "http":
        return
    if scope["path"] == "/slow":
        await asyncio.sleep(HEAD_TIMEOUT * 4)
    body = b"done"
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def test_the_server_keeps_uvicorns_httptools_protocol() -> None:
    """httptools is a dependency (uvicorn's faster parser): the guard wraps it."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    assert issubclass(uvicorn_options()["http"], HttpToolsProtocol)


def _protocol(limit: int | None, head_timeout: float = HEAD_TIMEOUT) -> type[Any]:
    base = uvicorn_options().get("http", H11Protocol)
    return type("Quick", (base,), {"head_timeout": head_timeout, "connection_limit": limit})


@pytest.fixture()
def serve() -> Iterator[Any]:
    servers: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(protocol: type[Any]) -> int:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(100)
        config = uvicorn.Config(app, http=protocol, log_level="warning", lifespan="off",
                                access_log=False, timeout_keep_alive=60)
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        servers.append((server, thread))
        deadline = time.monotonic() + WAIT
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.started
        return int(sock.getsockname()[1])

    yield start
    for server, thread in servers:
        server.should_exit = True
        thread.join(WAIT)


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    sock.settimeout(WAIT)
    return sock


def _read_to_close(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (``socket.timeout`` after ``WAIT``)."""
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


def _read_response(sock: socket.socket) -> bytes:
    out = b""
    while b"done" not in out:
        chunk = sock.recv(65536)
        assert chunk, out
        out += chunk
    return out


def test_a_partial_head_is_answered_408_and_closed(serve: Any) -> None:
    port = serve(_protocol(None))
    with _connect(port) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert _read_to_close(sock).startswith(b"HTTP/1.1 408 ")


def test_a_silent_connection_is_closed(serve: Any) -> None:
    port = serve(_protocol(None))
    with _connect(port) as sock:
        assert _read_to_close(sock).startswith(b"HTTP/1.1 408 ")


def test_trickled_header_lines_do_not_keep_it_open(serve: Any) -> None:
    port = serve(_protocol(None))
    got = b""
    with _connect(port) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        sock.settimeout(HEAD_TIMEOUT / 3)  # a header line more often than the timeout
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                try:
                    sock.sendall(b"X-a: b\r\n")
                except OSError:
                    break  # closed by the server
                continue
            except OSError:
                break
            got += chunk
            if not chunk:
                break
        else:
            pytest.fail("the server kept a trickled head open")
    assert got.startswith(b"HTTP/1.1 408 ") or got == b""


def test_a_call_longer_than_the_head_timeout_is_not_cut(serve: Any) -> None:
    port = serve(_protocol(None))
    with _connect(port) as sock:
        sock.sendall(REQUEST % b"slow")
        first = _read_response(sock)
        assert first.startswith(b"HTTP/1.1 200 ") and first.endswith(b"done")
        sock.sendall(REQUEST % b"slow")  # the same connection, kept alive, again
        assert _read_response(sock).endswith(b"done")


def test_one_connection_over_the_limit_is_answered_503(serve: Any) -> None:
    port = serve(_protocol(4, head_timeout=60.0))
    held = [_connect(port) for _ in range(4)]
    try:
        for sock in held:  # each answered: the server holds all four now
            sock.sendall(REQUEST % b"fast")
            assert _read_response(sock).startswith(b"HTTP/1.1 200 ")
        with _connect(port) as extra:
            assert _read_to_close(extra).startswith(b"HTTP/1.1 503 ")
        held.pop().close()  # one fewer: a new one is served again (once the server saw it)
        deadline = time.monotonic() + WAIT
        while True:
            with _connect(port) as again:
                again.sendall(REQUEST % b"fast")
                try:
                    answer = again.recv(65536)
                except ConnectionResetError:
                    answer = b""
            if answer.startswith(b"HTTP/1.1 200 ") or time.monotonic() > deadline:
                break
        assert answer.startswith(b"HTTP/1.1 200 "), answer
    finally:
        for sock in held:
            sock.close()
