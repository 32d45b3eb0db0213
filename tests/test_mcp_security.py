"""The MCP server's HTTP surface under hostile input (issue 11, item 9): the token never
printed, the token file never followed through a link, Host / Origin checked on /health
too, GET /mcp answered at once, loopback recognised as the OS resolves it, bodies
capped, deep JSON refused, and hostile tool arguments handed to the core unchanged."""

from __future__ import annotations

import importlib
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import attrs
import httpx2
import pytest
from mcp import Client

import echo_core
from echo_core.errors import EchoError, ExitCode, usage_error
from plugins.transport_mcp.bearer import TOKEN_FILE, is_loopback, resolve_token
from plugins.transport_mcp.http_app import MAX_BODY_BYTES, loopback_security
from tests.capture_kit import VaultBox
from tests.conftest import CLI, REPO
from tests.mcp_kit import ADA, make_server, seeded_box, subprocess_env, with_client
from tests.test_mcp_transports import (
    INITIALIZE,
    JSON_HEADERS,
    RunningServer,
    free_port,
    start_server,
    with_http,
)

EVIL_HOST = "rebound.example.com"


@attrs.frozen
class Guarded:
    """A `serve` on 127.0.0.1 that generated its own token file (no ECHO_MCP_TOKEN)."""

    server: RunningServer
    token_file: Path

    @property
    def base(self) -> str:
        return self.server.base

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token_file.read_text('utf-8').strip()}"}


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guarded]:
    root = tmp_path_factory.mktemp("mcp-security")
    box = seeded_box(root)
    server = start_server(box, root / "serve.log")  # stdout and stderr both land there
    yield Guarded(server, box.state / TOKEN_FILE)
    server.stop()


def _port(base: str) -> str:
    return base.rsplit(":", 1)[1]


# -- 1. the token is never printed ------------------------------------------------------


def test_a_new_token_is_not_printed_only_where_to_read_it(guarded: Guarded) -> None:
    token = guarded.token_file.read_text("utf-8").strip()
    assert len(token) >= 32 and guarded.token_file.is_file()
    assert stat.S_IMODE(guarded.token_file.stat().st_mode) == 0o600
    log = guarded.server.log_text()
    assert "bearer token created now in" in log
    assert token not in log
    assert f"print the token with: cat {guarded.token_file}" in log
    assert f"Bearer $(cat {guarded.token_file})" in log


# -- 2. Host / Origin on /health as on /mcp ---------------------------------------------


@pytest.mark.parametrize("path", ["/health", "/mcp"])
def test_a_rebound_host_or_foreign_origin_is_refused_on_every_path(
        guarded: Guarded, path: str) -> None:
    def send(**headers: str) -> httpx2.Response:
        if path == "/health":
            return httpx2.get(guarded.base + path, headers=headers, timeout=5)
        return httpx2.post(guarded.base + path, json=INITIALIZE, timeout=5,
                           headers={**JSON_HEADERS, **guarded.auth, **headers})

    assert send(Host=f"{EVIL_HOST}:{_port(guarded.base)}").status_code == 421
    assert send(Origin=f"http://{EVIL_HOST}").status_code == 403
    assert send(Host=f"localhost:{_port(guarded.base)}",
                Origin=f"http://localhost:{_port(guarded.base)}").status_code == 200
    assert send().status_code == 200


# -- 3. GET /mcp ends at once -----------------------------------------------------------


def test_an_authenticated_get_on_mcp_is_405_at_once(guarded: Guarded) -> None:
    started = time.monotonic()
    response = httpx2.get(guarded.base + "/mcp", timeout=1.0,
                          headers={**guarded.auth, "Accept": "text/event-stream"})
    assert time.monotonic() - started < 1.0
    assert response.status_code == 405 and response.headers["allow"] == "POST"
    assert "POST" in response.json()["message"]
    unauthenticated = httpx2.get(guarded.base + "/mcp", timeout=1.0,
                                 headers={"Accept": "text/event-stream"})
    assert unauthenticated.status_code == 401  # nothing said before the token


def test_a_rejected_request_path_reaches_the_log_escaped(guarded: Guarded) -> None:
    """The 401 log line names the path, which the client chooses: terminal control
    characters (a title-setting OSC, a screen clear, RLO) must not reach the log raw."""
    hostile = "/mcp%1b]0;pwned%07%1b[2J%e2%80%ae-marker-c41d"
    assert httpx2.get(guarded.base + hostile, timeout=5).status_code == 401
    time.sleep(0.2)
    line = next(line for line in guarded.server.log_text().splitlines()
                if "marker-c41d" in line)
    assert not any(ch in line for ch in "\x1b\x07\u202e"), repr(line)
    assert "\\x1b]0;pwned\\x07" in line and "\\u202e" in line


# -- cheap limits: body size, nesting, then /health still answers -----------------------


def test_an_oversized_body_is_413_and_deep_json_a_parse_error(guarded: Guarded) -> None:
    headers = {**JSON_HEADERS, **guarded.auth}
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * MAX_BODY_BYTES + b'"}}'
    assert httpx2.post(guarded.base + "/mcp", content=big, headers=headers,
                       timeout=10).status_code == 413
    nested = "[" * 50_000 + "]" * 50_000
    deep = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo_recall",'
            f'"arguments":{{"query":{nested}}}}}}}')
    for extra in ({}, {"MCP-Protocol-Version": "2026-07-28"}):
        response = httpx2.post(guarded.base + "/mcp", content=deep, timeout=10,
                               headers={**headers, **extra})
        assert response.status_code == 400 and response.json()["error"]["code"] == -32700
    assert httpx2.get(guarded.base + "/health", timeout=5).status_code == 200


# -- 4. the token file: no links, regular files only ------------------------------------


def test_a_symlinked_token_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    target = tmp_path / "precious.txt"
    target.write_text("not a token, someone's data\n", "utf-8")
    target.chmod(0o644)
    (state / TOKEN_FILE).symlink_to(target)
    with pytest.raises(EchoError) as caught:
        resolve_token({}, state)
    assert caught.value.code == ExitCode.NOT_CONFIGURED
    assert "symbolic link" in caught.value.message and "ECHO_MCP_TOKEN" in caught.value.message
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert target.read_text("utf-8") == "not a token, someone's data\n"


def test_a_dangling_link_or_a_folder_as_token_file_is_refused(tmp_path: Path) -> None:
    dangling = tmp_path / "a"
    dangling.mkdir()
    (dangling / TOKEN_FILE).symlink_to(tmp_path / "would-be-created")
    with pytest.raises(EchoError, match="symbolic link") as caught:
        resolve_token({}, dangling)
    assert caught.value.code == ExitCode.NOT_CONFIGURED
    assert not (tmp_path / "would-be-created").exists()
    folder = tmp_path / "b"
    (folder / TOKEN_FILE).mkdir(parents=True)
    with pytest.raises(EchoError, match="not a regular file") as caught:
        resolve_token({}, folder)
    assert caught.value.code == ExitCode.NOT_CONFIGURED


def test_a_loose_token_file_is_tightened_and_read(tmp_path: Path) -> None:
    (tmp_path / TOKEN_FILE).write_text("  kept-secret-123\n", "utf-8")
    (tmp_path / TOKEN_FILE).chmod(0o644)
    token = resolve_token({}, tmp_path)
    assert token.secret == "kept-secret-123" and token.origin == "file"
    assert stat.S_IMODE((tmp_path / TOKEN_FILE).stat().st_mode) == 0o600
    created = resolve_token({}, tmp_path / "new")
    assert created.origin == "created" and created.path is not None
    assert stat.S_IMODE(created.path.stat().st_mode) == 0o600


def test_a_short_token_from_the_environment_is_used_with_a_warning_that_hides_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    short = resolve_token({"ECHO_MCP_TOKEN": "qz7Xw"}, tmp_path)
    assert (short.secret, short.origin) == ("qz7Xw", "env")
    said = capsys.readouterr().err
    assert "ECHO_MCP_TOKEN is 5 characters" in said and "short can be guessed" in said
    assert "qz7Xw" not in said
    long = resolve_token({"ECHO_MCP_TOKEN": "k" * 16}, tmp_path)
    assert long.origin == "env" and capsys.readouterr().err == ""


def test_serve_with_a_symlinked_token_file_exits_78_saying_what_to_do(tmp_path: Path) -> None:
    box = VaultBox(tmp_path)
    box.state.mkdir(parents=True)
    target = tmp_path / "precious.txt"
    target.write_text("data\n", "utf-8")
    target.chmod(0o644)
    (box.state / TOKEN_FILE).symlink_to(target)
    done = subprocess.run([*CLI, "serve", "--port", str(free_port()), "--vault",
                           str(box.vault), "--state-dir", str(box.state)],
                          env=subprocess_env(box), cwd=REPO, capture_output=True, text=True,
                          timeout=20, check=False)
    assert done.returncode == 78, done.stderr
    assert "symbolic link" in done.stderr and "Delete it" in done.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o644 and target.read_text() == "data\n"


# -- 5. loopback as the OS resolves it --------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "127.1", "127.0.0.2", "::1", "[::1]",
                                  "localhost", "::ffff:127.0.0.1"])
def test_loopback_binds_are_recognised(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.1",
                                  "2001:db8::1", "no-such-host.invalid", ""])
def test_other_binds_are_not_loopback(host: str) -> None:
    assert not is_loopback(host)


def test_serve_on_a_loopback_shorthand_needs_no_token_and_checks_host(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    server = start_server(box, tmp_path / "serve.log", host="127.1")
    try:
        assert (box.state / TOKEN_FILE).is_file()
        rebound = httpx2.get(server.base + "/health", timeout=5,
                             headers={"Host": f"{EVIL_HOST}:{_port(server.base)}"})
        assert rebound.status_code == 421
        token = (box.state / TOKEN_FILE).read_text("utf-8").strip()
        post = httpx2.post(server.base + "/mcp", json=INITIALIZE, timeout=5, headers={
            **JSON_HEADERS, "Authorization": f"Bearer {token}",
            "Host": f"{EVIL_HOST}:{_port(server.base)}"})
        assert post.status_code == 421
    finally:
        server.stop()


def test_every_loopback_bind_gets_the_host_check_and_no_other_does() -> None:
    """The SDK turns the check on only for 127.0.0.1, localhost and ::1 by name."""
    for host, own in (("127.0.0.2", "127.0.0.2:8765"), ("127.1", "127.1:8765"),
                      ("::1", "[::1]:8765"), ("localhost", "localhost:8765")):
        settings = loopback_security(host)
        assert settings is not None and settings.enable_dns_rebinding_protection
        allowed = settings.allowed_hosts
        assert f"{own.rsplit(':', 1)[0]}:*" in allowed and "127.0.0.1:*" in allowed
        assert not any(EVIL_HOST in h for h in allowed)
    assert loopback_security("0.0.0.0") is None and loopback_security("192.168.1.20") is None


# -- 6. hostile tool arguments reach the core unchanged; its usage error maps -----------

HOSTILE = ["Ada\nLovelace", "Ada\rLovelace", "\x1b[31mAda\x07", "Ada\u202eecalevol", "A\x00da"]


def _call_each(box: VaultBox, tool: str, calls: list[dict[str, Any]]) -> list[Any]:
    """Results of calling ``tool`` with each argument set, on one in-memory server."""
    server = make_server(box)

    async def body(client: Client) -> list[Any]:
        return [await client.call_tool(tool, arguments) for arguments in calls]

    try:
        results: list[Any] = with_client(server, body)
        return results
    finally:
        server.runner.close()


def _is_usage_error_naming(result: Any, field: str) -> bool:
    data = result.structured_content or {}
    return bool(result.is_error and data.get("error", {}).get("code") == "usage"
                and data["error"]["exit"] == 2 and field in data.get("message", ""))


def test_hostile_titles_reach_capture_as_is_and_its_usage_error_is_an_mcp_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def refusing_capture(ctx: Any, request: Any) -> Any:
        seen.append(request.title)
        raise usage_error("title: must be one line of printable text; remove control "
                          "characters and line breaks")

    # modules that bind ``capture`` when first imported (and the lazy public export, which
    # caches it on first use) must bind the real one now: first imported inside the patch,
    # they would keep the refusing stand-in for the rest of the test process
    importlib.import_module("echo_core.ops.triage")
    importlib.import_module("echo_core.ops.session_end")
    assert echo_core.capture is not refusing_capture
    monkeypatch.setattr("echo_core.ops.capture.capture", refusing_capture)
    results = _call_each(VaultBox(tmp_path).init(), "echo_capture",
                         [{"title": title, "kind": "person"} for title in HOSTILE])
    assert seen == HOSTILE
    assert all(_is_usage_error_naming(result, "title") for result in results)


def test_hostile_paths_are_never_written_and_any_refusal_is_a_usage_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-path lock normalises the path first (``echo_core.paths``), so the refusal
    may come from there or from the operation: either way a ``usage`` error."""
    paths = [f"{ADA}\n.md", "resources/people/\x1b[2Jada.md", "resources/\u202eada.md"]
    seen: list[str] = []

    def refusing_append(ctx: Any, note: str, line: str) -> Any:
        seen.append(note)
        raise usage_error("path: must be one line without control characters")

    monkeypatch.setattr("echo_core.ops.notes_io.append_line", refusing_append)
    box = seeded_box(tmp_path)
    results = _call_each(box, "echo_append_note",
                         [{"path": path, "line": "- a line"} for path in paths])
    assert set(seen) <= set(paths)
    assert all(_is_usage_error_naming(result, "path") for result in results)
    assert not any(set(p.name) & {"\n", "\x1b", "\u202e"} for p in box.vault.rglob("*"))


def test_tool_calls_log_no_argument_text(guarded: Guarded) -> None:
    async def body(client: Client) -> None:
        await client.call_tool("echo_recall", {"query": "\x1b]0;hijack\x07 marker-7f3a"})

    token = guarded.auth["Authorization"].split()[1]
    anyio.run(with_http, f"{guarded.base}/mcp", token, body)
    time.sleep(0.2)
    log = guarded.server.log_text()
    assert "marker-7f3a" not in log and "hijack" not in log and "tool=echo_recall" in log
