"""A stateful fake of the Obsidian Local REST API 5.x, for tests (127.0.0.1 only).

``FakeObsidian`` serves an in-memory vault (``tests/obsidian_fake_vault.py``) on a random
free port, in a thread, over HTTP or HTTPS (a certificate from ``tests/obsidian_tls.py``).
It follows ``tests/data/obsidian-openapi.yaml``: the paths ``/``, ``/vault/``,
``/vault/{dir}/`` and ``/vault/{filename}`` (GET/PUT/POST/PATCH/DELETE), their status
codes, and the ``{errorCode, message}`` error shape; every exchange is recorded in
``exchanges`` so ``tests/obsidian_spec.py`` can check it against the spec.

Fault injection (``inject``), for the next matching request(s):

* ``status``: answer ``status`` (5xx) with an error body; nothing is applied;
* ``slow``: wait ``delay`` seconds, then answer normally;
* ``timeout``: say nothing for ``delay`` seconds, then drop the connection (not applied);
* ``drop_after_headers``: send the status line and headers, then close before the body
  (the request is not applied);
* ``drop_before_response``: read the request, then close without a word (not applied).

Faults that apply the request but garble the answer (a hostile or broken server):

* ``wrong_type``: the answer with ``Content-Type: text/html`` (body unchanged);
* ``truncated_close``: no Content-Length, the first half of the body, then close;
* ``slow_body``: the answer's body one byte every ``delay`` seconds;
* ``slow_headers``: the status line and headers one byte every ``delay`` seconds.

Answers a broken server or a proxy in front of it may give (nothing is applied):

* ``status`` with ``message``: the error body carries that message (any length);
* ``big_body``: ``200`` with a markdown body of ``size`` bytes, sent in 64 KiB pieces
  with a Content-Length, or chunked (no length: it only grows) when ``chunked``;
  ``Fault.sent`` counts the bytes the client took before it hung up;
* ``redirect``: ``status`` (a 3xx) with ``Location: location``.

``refuse()`` stops listening and cuts open connections (connection refused); ``resume()``
listens again on the same port.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from tests.obsidian_fake_api import MARKDOWN, FakeApi, error
from tests.obsidian_fake_vault import FakeVault


@dataclass
class Exchange:
    """One request and the fake's answer (``fault`` names an injected failure)."""

    method: str
    target: str
    request_headers: dict[str, str]
    request_body: bytes
    status: int
    response_headers: dict[str, str]
    response_body: bytes
    fault: str | None = None


@dataclass
class Fault:
    """A failure to inject into the next ``times`` requests matching ``method``/``path``."""

    kind: str
    method: str | None = None
    path: str | None = None
    times: int = 1
    skip: int = 0  # let this many matching requests through first
    status: int = 503
    delay: float = 0.0
    message: str = "injected server error"
    size: int = 0
    chunked: bool = False
    location: str = ""
    sent: int = 0  # big_body: bytes written before the client hung up


class FakeObsidian:
    """The fake server (see the module docstring). Use as a context manager or call
    ``start()`` / ``stop()``."""

    def __init__(self, api_key: str = "test-key", *, tls: ssl.SSLContext | None = None) -> None:
        self.api_key = api_key
        self.tls = tls
        self.vault = FakeVault()
        self.api = FakeApi(api_key, self.vault)
        self.exchanges: list[Exchange] = []
        self.faults: list[Fault] = []
        self.port = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._guard = threading.Lock()
        self._wake = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    # --- life cycle -------------------------------------------------------------------

    def start(self) -> None:
        self._server = _Server(("127.0.0.1", self.port), self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def refuse(self) -> None:
        """Stop listening and cut every open connection (clients get 'refused')."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
            server.cut_connections()

    def resume(self) -> None:
        """Listen again on the same port."""
        if self._server is None:
            self.start()

    def stop(self) -> None:
        self._wake.set()
        self.refuse()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- faults and records -----------------------------------------------------------

    def inject(self, kind: str, **options: Any) -> Fault:
        """Add a ``Fault(kind, **options)`` (see the module docstring)."""
        fault = Fault(kind, **options)
        with self._guard:
            self.faults.append(fault)
        return fault

    def take_fault(self, method: str, target: str) -> Fault | None:
        with self._guard:
            for fault in self.faults:
                if (fault.method in (None, method)) and (fault.path is None or fault.path in target):
                    if fault.skip > 0:
                        fault.skip -= 1
                        return None
                    fault.times -= 1
                    if fault.times <= 0:
                        self.faults.remove(fault)
                    return fault
        return None

    def record(self, exchange: Exchange) -> None:
        with self._guard:
            self.exchanges.append(exchange)

    def sleep(self, seconds: float) -> None:
        self._wake.wait(seconds)

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        """Track requests in progress (``in_flight``, peak ``max_in_flight``)."""
        with self._guard:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._guard:
                self.in_flight -= 1

#: Fault kinds that apply the request and then garble the answer.
GARBLING = ("wrong_type", "truncated_close", "slow_body", "slow_headers")
#: Fault kinds answered without applying the request (a proxy or a broken server).
SUBSTITUTES = ("big_body", "redirect")
#: The pieces a ``big_body`` is written in.
PIECE = 64 * 1024


class _Handler(BaseHTTPRequestHandler):
    """Reads one request, applies faults, asks ``FakeObsidian.answer``, records."""

    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 30
    disable_nagle_algorithm = True

    def setup(self) -> None:
        fake = self.server.fake
        self.server.track(self.request)
        if fake.tls is not None:
            self.request.settimeout(5)
            self.request = fake.tls.wrap_socket(self.request, server_side=True)
            self.server.track(self.request)
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.request.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _serve(self) -> None:
        fake = self.server.fake
        headers = {k.lower(): v for k, v in self.headers.items()}
        length = int(headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        fault = fake.take_fault(self.command, self.path)
        with fake.counting():
            self._answer(fake, headers, body, fault)

    def _answer(
        self, fake: FakeObsidian, headers: dict[str, str], body: bytes, fault: Fault | None
    ) -> None:
        if fault is not None and fault.kind == "slow":
            fake.sleep(fault.delay)
            fault = None
        if fault is not None and fault.kind in GARBLING:
            self._garbled(fake, headers, body, fault)
            return
        if fault is not None and fault.kind in SUBSTITUTES:
            fake.record(Exchange(self.command, self.path, headers, body, 0, {}, b"", fault.kind))
            self._substitute(fault)
            return
        if fault is not None and fault.kind != "status":
            if fault.kind == "timeout":
                fake.sleep(fault.delay)
            elif fault.kind == "drop_after_headers":
                self.send_response(200)
                self.send_header("Content-Type", MARKDOWN)
                self.send_header("Content-Length", "4096")
                self.end_headers()
            fake.record(Exchange(self.command, self.path, headers, body, 0, {}, b"", fault.kind))
            self._drop()
            return
        if fault is not None:
            status, out_headers, payload = error(fault.status, 50000, fault.message)
        else:
            status, out_headers, payload = fake.api.answer(self.command, self.path, headers, body)
        fake.record(  # before answering, so a client never sees an unrecorded reply
            Exchange(
                self.command, self.path, headers, body, status,
                {k.lower(): v for k, v in out_headers.items()}, payload,
                None if fault is None else "status",
            )
        )
        self.send_response(status)
        for name, value in out_headers.items():
            self.send_header(name, value)
        if status != 204:
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _substitute(self, fault: Fault) -> None:
        """A ``redirect`` or a ``big_body`` in place of the API's answer."""
        self.send_response(fault.status if fault.kind == "redirect" else 200)
        if fault.kind == "redirect":
            self.send_header("Location", fault.location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_header("Content-Type", MARKDOWN)
        if fault.chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(fault.size))
        self.end_headers()
        piece = b"x" * (PIECE - 1) + b"\n"
        try:
            while fault.sent < fault.size:
                part = piece[: fault.size - fault.sent]
                frame = b"%x\r\n%s\r\n" % (len(part), part) if fault.chunked else part
                self.wfile.write(frame)
                fault.sent += len(part)
            if fault.chunked:
                self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    def _garbled(
        self, fake: FakeObsidian, headers: dict[str, str], body: bytes, fault: Fault
    ) -> None:
        status, out_headers, payload = fake.api.answer(self.command, self.path, headers, body)
        fake.record(Exchange(self.command, self.path, headers, body, 0, {}, b"", fault.kind))
        if fault.kind == "slow_headers":
            self._trickle_headers(status, out_headers, payload, fault.delay)
            return
        if fault.kind == "wrong_type":
            out_headers = {**out_headers, "Content-Type": "text/html; charset=iso-8859-1"}
        self.send_response(status)
        for name, value in out_headers.items():
            self.send_header(name, value)
        if fault.kind == "truncated_close":
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self._drop()
            return
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if fault.kind == "wrong_type":
            self.wfile.write(payload)
            return
        for index in range(len(payload)):  # slow_body
            try:
                self.wfile.write(payload[index : index + 1])
                self.wfile.flush()
            except OSError:
                return
            fake.sleep(fault.delay)

    def _trickle_headers(
        self, status: int, out_headers: dict[str, str], payload: bytes, delay: float
    ) -> None:
        """The status line and headers one byte every ``delay`` seconds, then the body."""
        lines = [f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}"]
        lines += [f"{name}: {value}" for name, value in out_headers.items()]
        lines.append(f"Content-Length: {len(payload)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        try:
            for index in range(len(head)):
                self.wfile.write(head[index : index + 1])
                self.wfile.flush()
                self.server.fake.sleep(delay)
            self.wfile.write(payload)
        except OSError:
            self.close_connection = True

    do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], fake: FakeObsidian) -> None:
        self.fake = fake
        self._open: set[socket.socket] = set()
        self._open_guard = threading.Lock()
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)  # skip HTTPServer's reverse DNS lookup
        self.server_name, self.server_port = "127.0.0.1", self.server_address[1]

    def track(self, sock: socket.socket) -> None:
        with self._open_guard:
            self._open.add(sock)

    def shutdown_request(self, request: Any) -> None:
        with self._open_guard:
            self._open.discard(request)
        super().shutdown_request(request)

    def cut_connections(self) -> None:
        with self._open_guard:
            sockets, self._open = list(self._open), set()
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # dropped connections and refused handshakes are expected here
