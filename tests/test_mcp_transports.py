"""`echo-memory serve` as a user runs it: streamable HTTP with the bearer token, stdio,
the token file, /health, the refusal of an exposed bind, and a log free of the token."""

from __future__ import annotations

import json
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import attrs
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.capture_kit import VaultBox
from tests.conftest import CLI, REPO, run_cli
from tests.mcp_kit import FULL_TOOLS, call, run_scenario, seeded_box, subprocess_env

TOKEN = "test-token-9f6c2d0b7a41e8c35d2f"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@attrs.define
class RunningServer:
    """A `serve` subprocess: its base URL, log file and process."""

    base: str
    log: Path
    proc: subprocess.Popen[bytes]
    box: VaultBox

    def log_text(self) -> str:
        return self.log.read_text("utf-8", errors="replace")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_server(box: VaultBox, log: Path, *flags: str, host: str = "127.0.0.1",
                 **env: str) -> RunningServer:
    """Start ``echo-memory serve --host host`` on a free port and wait until /health
    answers."""
    port = free_port()
    args = [*CLI, "serve", "--host", host, "--port", str(port), "--vault", str(box.vault),
            "--state-dir", str(box.state), *flags]
    with log.open("wb") as sink:
        proc = subprocess.Popen(args, env=subprocess_env(box, **env), stdout=sink,
                                stderr=subprocess.STDOUT, cwd=REPO)
    url_host = f"[{host}]" if ":" in host else host
    server = RunningServer(f"http://{url_host}:{port}", log, proc, box)
    deadline = time.monotonic() + 60  # a loaded 2-core box needs the margin
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited {proc.returncode}:\n{server.log_text()}")
        try:
            if httpx2.get(f"{server.base}/health", timeout=1).status_code == 200:
                return server
        except httpx2.TransportError:
            pass
        time.sleep(0.1)
    server.stop()
    raise AssertionError(f"serve did not come up:\n{server.log_text()}")


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("mcp-http")
    server = start_server(seeded_box(root), root / "serve.log", ECHO_MCP_TOKEN=TOKEN)
    yield server
    server.stop()


async def with_http(url: str, token: str, body: Any) -> Any:
    # These tests check behaviour, not speed (bench/perf_mcp.py does): a worker process
    # just started answers its first calls slowly on a loaded 2-core CI machine, so the
    # client waits longer than httpx's 5 s default before calling it a failure.
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60.0) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        return await body(client)


def test_every_tool_works_over_http_with_the_token(http_server: RunningServer) -> None:
    anyio.run(with_http, f"{http_server.base}/mcp", TOKEN, run_scenario)


def test_the_legacy_handshake_works_too(http_server: RunningServer) -> None:
    response = httpx2.post(f"{http_server.base}/mcp", json=INITIALIZE, timeout=10,
                           headers={**JSON_HEADERS, "Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["result"]["serverInfo"]["name"] == "echo-memory"


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", f"Basic {TOKEN}",
                                           f"Bearer {TOKEN}x", "Bearer"])
def test_mcp_without_the_right_token_is_401(http_server: RunningServer,
                                            authorization: str | None) -> None:
    headers = dict(JSON_HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization
    response = httpx2.post(f"{http_server.base}/mcp", json=INITIALIZE, headers=headers, timeout=10)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "Authorization: Bearer" in response.json()["message"]


def test_health_is_open_and_reports_the_vault(http_server: RunningServer) -> None:
    response = httpx2.get(f"{http_server.base}/health", timeout=10)
    assert response.status_code == 200
    report = response.json()
    assert set(report) == {"ok", "vault_reachable", "outbox_depth", "index_age_s"}
    assert report["ok"] is True and report["vault_reachable"] is True
    assert report["outbox_depth"] in (None, 0)  # None while no outbox plugin is installed
    assert isinstance(report["index_age_s"], (int, float)) and report["index_age_s"] >= 0


def test_the_log_has_one_line_per_call_and_never_the_token(http_server: RunningServer) -> None:
    async def body(client: Client) -> None:
        await call(client, "echo_recall", query="needle-in-the-log")
        await call(client, "echo_get_note", path="missing.md")

    anyio.run(with_http, f"{http_server.base}/mcp", TOKEN, body)
    httpx2.post(f"{http_server.base}/mcp", json=INITIALIZE, timeout=10,
                headers={**JSON_HEADERS, "Authorization": f"Bearer {TOKEN}-guess"})
    time.sleep(0.2)
    log = http_server.log_text()
    assert TOKEN not in log
    assert "needle-in-the-log" not in log
    assert "tool=echo_recall ms=" in log and "outcome=ok" in log
    assert "tool=echo_get_note ms=" in log and "outcome=error:not-found" in log
    assert "auth: rejected POST /mcp" in log


def test_a_generated_token_file_is_private_and_never_printed(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    first = start_server(box, tmp_path / "first.log")
    try:
        token_file = box.state / "mcp-token"
        token = token_file.read_text("utf-8").strip()
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert token not in first.log_text()
        assert f'--header "Authorization: Bearer $(cat {token_file})"' in first.log_text()

        async def body(client: Client) -> set[str]:
            return {t.name for t in (await client.list_tools()).tools}

        assert anyio.run(with_http, f"{first.base}/mcp", token, body) == FULL_TOOLS
    finally:
        first.stop()
    second = start_server(box, tmp_path / "second.log")
    second.stop()
    assert token not in second.log_text()
    assert f"Bearer $(cat {token_file})" in second.log_text()


def test_several_worker_processes_serve_every_tool(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    server = start_server(box, tmp_path / "workers.log", "--workers", "2", ECHO_MCP_TOKEN=TOKEN)
    try:
        anyio.run(with_http, f"{server.base}/mcp", TOKEN, run_scenario)
        assert httpx2.get(f"{server.base}/health", timeout=10).json()["ok"] is True
    finally:
        server.stop()
    assert "2 process(es)" in server.log_text() and TOKEN not in server.log_text()


def test_json_banner_is_one_object_on_stderr(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    port = free_port()
    proc = subprocess.Popen([*CLI, "serve", "--port", str(port), "--json", "--vault",
                             str(box.vault), "--state-dir", str(box.state)],
                            env=subprocess_env(box, ECHO_MCP_TOKEN=TOKEN),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    try:
        banner = json.loads(proc.stderr.readline())  # type: ignore[union-attr]
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert banner["url"] == f"http://127.0.0.1:{port}/mcp" and banner["token_origin"] == "env"
    assert set(banner["tools"]) == FULL_TOOLS and "claude mcp add" in banner["claude_code"]
    assert banner["workers"] == 1
    assert out == b""


def test_an_exposed_bind_without_an_explicit_token_is_refused(tmp_path: Path) -> None:
    box = VaultBox(tmp_path)
    env = subprocess_env(box)
    done = run_cli(["serve", "--host", "0.0.0.0", "--port", str(free_port()),
                    "--vault", str(box.vault)], env=env)
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0" in done.stderr and "ECHO_MCP_TOKEN" in done.stderr
    assert not (box.state / "mcp-token").exists()


def test_every_tool_works_over_stdio(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    params = StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "serve", "--stdio", "--vault", str(box.vault),
                              "--state-dir", str(box.state)],
        env=subprocess_env(box), cwd=str(REPO))
    errlog = tmp_path / "stdio.log"

    async def main() -> None:
        with errlog.open("w") as sink:
            async with Client(stdio_client(params, errlog=sink)) as client:
                await run_scenario(client)

    anyio.run(main)
    log = errlog.read_text("utf-8")
    assert "echo-memory MCP server on stdio" in log and "tool=echo_log_session" in log


HEAVY_PROBE = """
import sys
from plugins.transport_cli.app import main
try:
    main(["serve", "--help"])
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"mcp", "pydantic", "uvicorn", "starlette"})
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
"""


def test_serve_help_imports_no_server_code() -> None:
    done = subprocess.run([sys.executable, "-c", HEAVY_PROBE], capture_output=True, text=True,
                          cwd=REPO, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "--stdio" in done.stdout and "ECHO_MCP_TOKEN" in done.stdout
    assert "HEAVY=\n" in done.stderr
