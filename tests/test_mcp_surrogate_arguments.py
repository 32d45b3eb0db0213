"""A lone UTF-16 surrogate in a tool argument (``"\\ud800"`` is a valid JSON escape) is a
``usage`` error naming the argument, on every tool and surface: ``parse_params`` checks
every string (nested ones too), ``POST /call/<tool>`` answers 400, and ``serve --stdio``
answers every request, even one the SDK's JSON reader refuses or whose answer cannot be
encoded (plugins/transport_mcp/stdio_guard.py), instead of leaving the client waiting."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import anyio
import attrs
import httpx2
import pytest

from echo_core import Envelope
from echo_core.hookspecs import hookimpl
from echo_core.operations import Operation, ParamsInvalid, param, parse_params
from plugins.transport_mcp.http_app import build_http_app
from plugins.transport_mcp.server import EchoMcpServer
from tests.capture_kit import VaultBox
from tests.conftest import CLI, REPO
from tests.mcp_kit import ADA, make_server, subprocess_env

TOKEN = "surrogate-arguments-token-" + "5" * 16
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
LONE = "\ud800"


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[VaultBox, EchoMcpServer]]:
    box = VaultBox(tmp_path).init()
    server = make_server(box)
    yield box, server
    server.runner.close()


def _post(server: EchoMcpServer, path: str, arguments: Mapping[str, Any]) -> httpx2.Response:
    """``arguments`` POSTed as JSON; ``json.dumps`` writes a lone surrogate as ``\\ud800``."""
    app = build_http_app(server, TOKEN)
    body = json.dumps(arguments).encode()

    async def main() -> httpx2.Response:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return await http.post(path, content=body, headers=AUTH)

    return anyio.run(main)


# --- parse_params: every string, nested ones included ---------------------------------


@attrs.frozen(kw_only=True)
class Item:
    line: str = param(help="A line.")


@attrs.frozen(kw_only=True)
class Nested:
    text: str = param("", help="Text.")
    tags: tuple[str, ...] = param((), help="Tags.")
    items: tuple[Item, ...] = param((), help="Items.")
    extra: Mapping[str, Any] | None = param(None, help="Free JSON.")


@pytest.mark.parametrize(("arguments", "field"), [
    ({"text": f"a{LONE}"}, "text"),
    ({"tags": ["ok", f"b{LONE}"]}, "tags[1]"),
    ({"items": [{"line": "fine"}, {"line": LONE}]}, "items[1].line"),
    ({"extra": {"k": ["x", {"deep": f"c{LONE}"}]}}, "extra.k[1].deep"),
    ({"extra": {f"key{LONE}": 1}}, "extra"),
])
def test_a_lone_surrogate_anywhere_is_a_usage_error_naming_its_field(
        arguments: dict[str, Any], field: str) -> None:
    with pytest.raises(ParamsInvalid) as caught:
        parse_params(Nested, arguments, surface="mcp", operation="nested")
    assert field in caught.value.fields
    assert "not valid UTF-8 text" in caught.value.message
    caught.value.message.encode("utf-8")  # the message itself can be sent


def test_an_unknown_name_with_a_lone_surrogate_is_shown_escaped() -> None:
    with pytest.raises(ParamsInvalid) as caught:
        parse_params(Nested, {f"t{LONE}": 1, "items": [{f"l{LONE}": "x", "line": "y"}]},
                     surface="mcp")
    assert caught.value.fields == ("t\\ud800", "items[0].l\\ud800")
    caught.value.message.encode("utf-8")


def test_valid_text_beyond_ascii_still_passes() -> None:
    parsed = parse_params(Nested, {"text": "Ada Lovelace — 数 🙂", "extra": {"é": ["ü"]}},
                          surface="mcp")
    assert parsed.text == "Ada Lovelace — 数 🙂" and parsed.extra == {"é": ["ü"]}


# --- POST /call/<tool> ----------------------------------------------------------------


@pytest.mark.parametrize(("tool", "arguments", "field"), [
    ("echo_recall", {"query": f"abc{LONE}"}, "query"),
    ("echo_resolve", {"mention": f"Ada{LONE}"}, "mention"),
    ("echo_get_note", {"path": f"resources/people/a{LONE}.md"}, "path"),
    ("echo_note_history", {"path": f"{ADA}{LONE}"}, "path"),
    ("echo_link", {"a": "Ada Lovelace", "b": f"Engine{LONE}"}, "b"),
    ("echo_set_scope", {"scope": f"work{LONE}"}, "scope"),
    ("echo_ask_habitat", {"query": f"make{LONE}"}, "query"),
    ("echo_habitat_insights", {"entities": ["ok", f"x{LONE}"]}, "entities[1]"),
    ("echo_capture", {"title": "Grace Hopper", "tags": [f"t{LONE}"]}, "tags[0]"),
    ("echo_triage_inbox", {"proposals": [{"line": f"l{LONE}"}], "apply": True},
     "proposals[0].line"),
    ("echo_append_note", {"path": ADA, "line": f"x{LONE}"}, "line"),
])
def test_a_plain_call_with_a_lone_surrogate_is_400_naming_the_argument(
        served: tuple[VaultBox, EchoMcpServer], tool: str, arguments: dict[str, Any],
        field: str) -> None:
    box, server = served
    before = box.tree_digest()
    answer = _post(server, f"/call/{tool}", arguments)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert (error["code"], error["exit"]) == ("usage", 2)
    assert field in error["fields"] and f"{field}: not valid UTF-8 text" in error["message"]
    assert box.tree_digest() == before


def test_an_unknown_tool_is_404_with_the_not_found_exit(
        served: tuple[VaultBox, EchoMcpServer]) -> None:
    _, server = served
    answer = _post(server, "/call/echo_nope", {})
    assert answer.status_code == 404
    assert (answer.json()["error"]["code"], answer.json()["error"]["exit"]) == ("not-found", 44)


@attrs.frozen(kw_only=True)
class NoParams:
    """Nothing."""


def _unsendable(ctx: Any, p: NoParams) -> Envelope[Any]:
    """A third party's result holding a lone surrogate (e.g. an undecodable file name)."""
    return Envelope(True, "listed", f"found {LONE}.md")


class UnsendablePlugin:
    @hookimpl
    def register_operations(self, register: Any) -> None:
        register("unsendable", Operation("unsendable", "Lists a bad name.",
                                         "Lists a bad name. Returns it.", NoParams,
                                         _unsendable, cli=None))


def test_a_result_that_cannot_be_encoded_is_a_json_error_not_a_crash(
        tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    server = make_server(box, extra=[("unsendable", UnsendablePlugin())])
    try:
        answer = _post(server, "/call/echo_unsendable", {})
        direct = anyio.run(server.call_tool, "echo_unsendable", {})
    finally:
        server.runner.close()
    error = answer.json()["error"]
    assert error["code"] == "failure" and "not valid UTF-8" in error["message"]
    assert direct.is_error and direct.model_dump_json()


# --- serve --stdio --------------------------------------------------------------------


class StdioSession:
    """A ``serve --stdio`` process spoken to in raw JSON-RPC lines (an SDK client could
    not even send a lone surrogate); each answer is awaited with a timeout."""

    def __init__(self, box: VaultBox, log: IO[bytes]) -> None:
        self.proc = subprocess.Popen(
            [*CLI, "serve", "--stdio", "--vault", str(box.vault), "--state-dir",
             str(box.state)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
            env=subprocess_env(box), cwd=str(REPO))
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self._next = 0

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The answer to one request (``json.dumps`` escapes a lone surrogate)."""
        self._next += 1
        self.send(json.dumps({"jsonrpc": "2.0", "id": self._next, "method": method,
                              "params": params}))
        try:
            answer: dict[str, Any] = json.loads(self._lines.get(timeout=30))
        except queue.Empty:
            raise AssertionError(f"no answer to {method} {params!r}") from None
        assert answer["id"] == self._next, answer
        return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def test_stdio_answers_a_lone_surrogate_with_a_usage_error_and_keeps_serving(
        tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    before = box.tree_digest()
    with (tmp_path / "stdio.log").open("wb") as log:
        session = StdioSession(box, log)
        try:
            session.request("initialize", {"protocolVersion": "2025-06-18",
                                           "capabilities": {},
                                           "clientInfo": {"name": "raw", "version": "0"}})
            session.send(json.dumps({"jsonrpc": "2.0",
                                     "method": "notifications/initialized"}))
            answers = {
                field: session.request("tools/call", {"name": tool, "arguments": arguments})
                for tool, arguments, field in (
                    ("echo_recall", {"query": f"abc{LONE}"}, "query"),
                    ("echo_capture", {"title": f"Grace{LONE}"}, "title"),
                    ("echo_recall", {"query": "x", "limit": 3, f"q{LONE}": 1}, "q\\ud800"))}
            unknown = session.request("tools/call", {"name": f"echo_{LONE}", "arguments": {}})
            after = session.request("tools/call", {"name": "echo_recall",
                                                   "arguments": {"query": "engine"}})
        finally:
            session.close()
    for field, answer in answers.items():
        result = answer["result"]
        assert result["isError"] is True, answer
        error = result["structuredContent"]["error"]
        assert error["code"] == "usage" and field in error["fields"], answer
    assert "error" in unknown or unknown["result"]["isError"] is True, unknown
    assert after["result"]["isError"] is False, after
    assert box.tree_digest() == before
