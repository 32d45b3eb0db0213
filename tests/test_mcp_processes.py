"""Serving from several processes (``serve --workers``), busy ports, and where reads run.

Pins: worker sockets share the port but a second server cannot join it; every accepted
connection has Nagle's algorithm off (the cause of 40 ms stalls per response before);
a worker that dies after start-up is replaced; reads of a local vault run on the event
loop's thread unless ``ECHO_MCP_READS`` says otherwise.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from pathlib import Path

import anyio
import httpx2
import pytest

from echo_core.errors import EchoError, ExitCode
from plugins.transport_mcp.processes import check_port_free, listening_socket, run_worker
from plugins.transport_mcp.runner import ToolRunner
from plugins.transport_mcp.serving import reads_inline
from tests.conftest import run_cli
from tests.mcp_kit import make_server, run_scenario, seeded_box, subprocess_env, with_client
from tests.test_mcp_transports import TOKEN, free_port, start_server, with_http


def test_worker_sockets_share_a_port_that_no_other_server_can_take() -> None:
    port = free_port()
    first = listening_socket("127.0.0.1", port, reuse_port=True)
    second = listening_socket("127.0.0.1", port, reuse_port=True)
    try:
        assert first.proto == second.proto == socket.IPPROTO_TCP
        with pytest.raises(EchoError) as caught:
            check_port_free("127.0.0.1", port)
        assert caught.value.code == ExitCode.UNAVAILABLE and str(port) in caught.value.message
    finally:
        first.close()
        second.close()
    check_port_free("127.0.0.1", port)  # free again once they are closed


def test_connections_accepted_on_a_worker_socket_have_nagle_off() -> None:
    sock = listening_socket("127.0.0.1", free_port(), reuse_port=True)
    seen: list[int] = []

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            accepted = transport.get_extra_info("socket")
            seen.append(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        host, port = sock.getsockname()[:2]
        _, writer = await asyncio.open_connection(host, port)
        for _ in range(200):
            if seen:
                break
            await asyncio.sleep(0.01)
        writer.close()
        server.close()
        await server.wait_closed()

    asyncio.run(main())
    assert seen and seen[0] != 0


def test_a_busy_port_is_refused_before_anything_starts(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    port = blocker.getsockname()[1]
    try:
        for workers in ("1", "2"):
            done = run_cli(["serve", "--port", str(port), "--workers", workers, "--vault",
                            str(box.vault), "--state-dir", str(box.state)],
                           env=subprocess_env(box, ECHO_MCP_TOKEN=TOKEN))
            assert done.returncode == ExitCode.UNAVAILABLE, done.stderr
            assert f"port {port}" in done.stderr and "already in use" in done.stderr
            assert "echo-memory MCP server:" not in done.stderr  # no banner for a dead server
    finally:
        blocker.close()


def _worker_pids(parent: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == parent and b"spawn_main" in cmdline:
            found.add(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_worker_takes_no_connection_before_it_is_ready() -> None:
    """A worker's socket listens only from ``ready()`` on: while it starts (imports,
    warm-up: seconds; a minute when the warm-up waits for the vault lock) the kernel
    sends new connections to the workers that can answer, not into its queue."""
    port = free_port()
    seen: list[str] = []

    def connect() -> str:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                return "accepted"
        except ConnectionRefusedError:
            return "refused"

    def target(spec: dict[str, object], sock: socket.socket, ready: object) -> None:
        seen.append(connect())  # still starting up
        assert callable(ready)
        ready()
        seen.append(connect())  # ready: the kernel queues it on this socket
        sock.close()

    class Event:
        def __init__(self) -> None:
            self.done = False

        def set(self) -> None:
            self.done = True

    event = Event()
    import signal

    previous = signal.getsignal(signal.SIGINT)
    try:
        run_worker(target, {"host": "127.0.0.1", "port": port}, event)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == ["refused", "accepted"] and event.done


def test_a_worker_that_dies_after_start_up_is_replaced(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    server = start_server(box, tmp_path / "workers.log", "--workers", "2", ECHO_MCP_TOKEN=TOKEN)
    try:
        deadline = time.monotonic() + 60
        while "2 worker processes ready" not in server.log_text():
            assert time.monotonic() < deadline and server.proc.poll() is None, server.log_text()
            time.sleep(0.1)
        workers = _worker_pids(server.proc.pid)
        assert len(workers) == 2
        victim = min(workers)
        os.kill(victim, 9)
        while True:
            now = _worker_pids(server.proc.pid)
            if len(now) == 2 and victim not in now:
                break
            assert time.monotonic() < deadline and server.proc.poll() is None, server.log_text()
            time.sleep(0.1)
        assert server.proc.poll() is None
        while server.log_text().count("worker ready in") < 3:  # the replacement listens
            assert time.monotonic() < deadline and server.proc.poll() is None, server.log_text()
            time.sleep(0.1)
        for _ in range(8):  # new connections land on either process: all answered
            assert httpx2.get(f"{server.base}/health", timeout=10).json()["ok"] is True
        anyio.run(with_http, f"{server.base}/mcp", TOKEN, run_scenario)
    finally:
        server.stop()
    assert "starting another" in server.log_text() and TOKEN not in server.log_text()
    assert not _worker_pids(server.proc.pid)


@pytest.mark.parametrize(("raw", "scheme", "inline"), [
    ("", "file", True), ("", "obsidian+https", False), ("threads", "file", False),
    ("inline", "obsidian+https", True), (" Inline ", "file", True)])
def test_reads_run_inline_for_a_local_vault_unless_told(raw: str, scheme: str,
                                                        inline: bool) -> None:
    assert reads_inline({"ECHO_MCP_READS": raw} if raw else {}, scheme) is inline


def test_an_unknown_reads_mode_is_a_usage_error() -> None:
    with pytest.raises(EchoError) as caught:
        reads_inline({"ECHO_MCP_READS": "fibers"}, "file")
    assert caught.value.code == ExitCode.USAGE and "ECHO_MCP_READS" in caught.value.message


@pytest.mark.parametrize("inline", [True, False])
def test_inline_reads_run_on_the_loop_thread_and_writes_never_do(tmp_path: Path,
                                                                 inline: bool) -> None:
    box = seeded_box(tmp_path)
    server = make_server(box)
    threads: dict[str, str] = {}
    runner: ToolRunner = server.runner
    runner.inline_reads = inline
    original = runner._run

    def spy(op, params, plan, readable=True):  # type: ignore[no-untyped-def]
        threads[op.tool_name] = threading.current_thread().name
        return original(op, params, plan, readable)

    runner._run = spy  # type: ignore[method-assign]

    async def body(client):  # type: ignore[no-untyped-def]
        threads["loop"] = threading.current_thread().name
        read = await client.call_tool("echo_recall", {"query": "analytical engine"})
        write = await client.call_tool("echo_capture", {"title": "Charles Babbage",
                                                        "kind": "person"})
        return read, write

    try:
        read, write = with_client(server, body)
    finally:
        runner.close()
    assert not read.is_error and not write.is_error
    assert (threads["echo_recall"] == threads["loop"]) is inline
    assert threads["echo_capture"].startswith("echo-mcp-write")


def _exit_before_ready(spec: dict[str, object], sock: socket.socket, ready: object) -> None:
    raise SystemExit(3)


def test_a_worker_that_dies_before_it_is_ready_stops_the_server() -> None:
    from plugins.transport_mcp.processes import Supervisor

    port = free_port()
    with pytest.raises(EchoError) as caught:
        Supervisor(_exit_before_ready, {"host": "127.0.0.1", "port": port}, 2).run()
    assert caught.value.code == ExitCode.UNAVAILABLE
    assert "during start-up (exit code 3)" in caught.value.message
    check_port_free("127.0.0.1", port)  # every worker is gone, the port is free
