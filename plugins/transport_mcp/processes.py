"""``serve --workers N``: N server processes on one port, each with its own socket.

Why not uvicorn's own supervisor: it shares one listening socket among its workers, and
asyncio's accept loop takes every pending connection at once, so a burst of clients
(keep-alive connections, opened together) all landed in whichever process woke first;
and its socket is made with protocol 0, which asyncio does not recognise as TCP, so
Nagle's algorithm stayed on and each response met the peer's delayed ACK (~40 ms).
Measured on 16 clients: 168 calls/s with two such workers against 330 with one process.

Here every worker binds its own socket with ``SO_REUSEPORT`` (the kernel spreads new
connections over the sockets) created as ``IPPROTO_TCP`` (so ``TCP_NODELAY`` is set on
every connection). Before starting them the parent binds the port once without
``SO_REUSEPORT``: if anything already listens there (another echo-memory server
included), that fails and nothing starts, instead of two servers silently sharing it.

The parent supervises: it starts the workers (``spawn``: a fresh interpreter, no
inherited threads or locks), restarts one that dies after it said it was ready, stops all
of them on SIGINT/SIGTERM and gives up (exit 69) when one dies before it was ready (a
start-up failure would only repeat) or too many die in a row. Linux and other systems
with ``SO_REUSEPORT`` only.
"""

from __future__ import annotations

import errno
import logging
import multiprocessing
import signal
import socket
import time
from collections.abc import Callable
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from typing import Any

from echo_core import EchoError, ExitCode

log = logging.getLogger("echo_memory.mcp")
#: More restarts than this within ``RESTART_WINDOW_S`` stop the server.
MAX_RESTARTS = 5
RESTART_WINDOW_S = 60.0
STOP_TIMEOUT_S = 10.0
LISTEN_BACKLOG = 2048


def bound_socket(host: str, port: int, *, reuse_port: bool) -> socket.socket:
    """A TCP socket bound to ``host:port``, not listening yet (``SO_REUSEADDR`` always,
    ``SO_REUSEPORT`` when asked); created as ``IPPROTO_TCP`` so asyncio sets
    ``TCP_NODELAY`` on the connections it accepts. With ``SO_REUSEPORT`` the kernel
    hands a socket new connections only once it listens."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


def listening_socket(host: str, port: int, *, reuse_port: bool) -> socket.socket:
    """``bound_socket``, listening."""
    sock = bound_socket(host, port, reuse_port=reuse_port)
    try:
        sock.listen(LISTEN_BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


def check_port_free(host: str, port: int) -> None:
    """Raise ``EchoError`` 69 naming the port when something already listens on it."""
    try:
        listening_socket(host, port, reuse_port=False).close()
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise EchoError(f"port {port} on {host} is already in use (another server?); "
                            "stop it or pass --port", ExitCode.UNAVAILABLE) from None
        raise EchoError(f"cannot listen on {host}:{port}: {exc.strerror}",
                        ExitCode.UNAVAILABLE) from None


#: What a worker process runs: ``target(spec, sock, ready)`` calls ``ready()`` once it
#: is about to serve (its start-up and warm-up done), then serves on ``sock``, which
#: listens from that call on.
WorkerTarget = Callable[[dict[str, Any], socket.socket, Callable[[], None]], None]


def run_worker(target: WorkerTarget, spec: dict[str, Any], ready: Any) -> None:
    """A worker process's entry: bind the shared port (not listening yet), then
    ``target(spec, sock, on_ready)``; ``on_ready`` makes the socket listen and sets
    ``ready`` (a multiprocessing ``Event``). A socket listens only once its worker can
    answer: with ``SO_REUSEPORT`` the kernel spreads new connections over the listening
    sockets, so one listening through a replacement worker's start-up (1-5 s of imports
    and warm-up; up to a minute when the warm-up waits for the vault lock) held every
    connection sent to it that long while the other workers were idle. Ctrl-C reaches
    the whole process group, but the supervisor stops its workers (SIGTERM): a worker
    ignores SIGINT, so a Ctrl-C prints no worker traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    started = time.monotonic()
    sock = bound_socket(spec["host"], spec["port"], reuse_port=True)

    def on_ready() -> None:
        sock.listen(LISTEN_BACKLOG)
        ready.set()
        log.info("worker ready in %.1f s", time.monotonic() - started)

    target(spec, sock, on_ready)


class Supervisor:
    """Starts ``count`` processes running ``target`` (see ``WorkerTarget``) on
    ``spec["host"]:spec["port"]`` and keeps them up."""

    def __init__(self, target: WorkerTarget, spec: dict[str, Any], count: int) -> None:
        self._context = multiprocessing.get_context("spawn")
        self._target = target
        self._spec = spec
        self._count = count
        self._started: dict[BaseProcess, Any] = {}  # process -> its ready Event
        self._restarts: list[float] = []
        self._stopping = False

    def _start_one(self) -> None:
        ready = self._context.Event()
        process = self._context.Process(target=run_worker,
                                        args=(self._target, self._spec, ready),
                                        name="echo-mcp-worker", daemon=False)
        process.start()
        self._started[process] = ready

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self._stopping = True

    def run(self) -> None:
        """Serve until SIGINT/SIGTERM (returns) or an unrecoverable worker failure
        (``EchoError`` 69). Workers are always stopped on the way out."""
        check_port_free(self._spec["host"], self._spec["port"])
        previous = {sig: signal.signal(sig, self._on_signal)
                    for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            for _ in range(self._count):
                self._start_one()
            announced = False
            while not self._stopping:
                ended = wait([p.sentinel for p in self._started], timeout=0.2)
                if ended and not self._stopping:
                    self._replace_ended()
                if not announced and all(r.is_set() for r in self._started.values()):
                    log.info("%d worker processes ready", self._count)
                    announced = True
        finally:
            self._stop_all()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _replace_ended(self) -> None:
        now = time.monotonic()
        for process, ready in list(self._started.items()):
            if process.is_alive():
                continue
            del self._started[process]
            code = process.exitcode
            if not ready.is_set():
                raise EchoError(f"a server worker process exited during start-up (exit "
                                f"code {code}); see the log above", ExitCode.UNAVAILABLE)
            self._restarts = [t for t in self._restarts if now - t < RESTART_WINDOW_S]
            if len(self._restarts) >= MAX_RESTARTS:
                raise EchoError(f"server worker processes keep dying ({MAX_RESTARTS} "
                                f"restarts in {RESTART_WINDOW_S:.0f} s; last exit code "
                                f"{code}); stopping", ExitCode.UNAVAILABLE)
            self._restarts.append(now)
            log.warning("a server worker process exited (code %s); starting another", code)
            self._start_one()

    def _stop_all(self) -> None:
        for process in self._started:
            if process.is_alive():
                process.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for process in self._started:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
        self._started.clear()
