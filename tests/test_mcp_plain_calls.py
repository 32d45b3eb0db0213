"""``POST /call/<tool>``: the MCP server's tools as plain JSON calls, behind the same
token and Host / Origin checks, answering what an MCP client gets as structured content,
with an HTTP status that follows the error code (plugins/transport_mcp/plain_calls.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from plugins.transport_mcp.http_app import MAX_BODY_BYTES, build_http_app
from plugins.transport_mcp.server import EchoMcpServer
from tests.capture_kit import VaultBox
from tests.mcp_kit import ADA, make_server, seeded_box, with_client

TOKEN = "plain-calls-token-" + "7" * 20
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[VaultBox, EchoMcpServer]]:
    box = seeded_box(tmp_path)
    server = make_server(box)
    yield box, server
    server.runner.close()


def _post(server: EchoMcpServer, path: str, body: bytes | None = None, *,
          headers: dict[str, str] | None = None, method: str = "POST") -> httpx2.Response:
    app = build_http_app(server, TOKEN)

    async def main() -> httpx2.Response:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return await http.request(method, path, content=body,
                                      headers=AUTH if headers is None else headers)

    return anyio.run(main)


def _call(server: EchoMcpServer, tool: str, **arguments: Any) -> httpx2.Response:
    return _post(server, f"/call/{tool}", json.dumps(arguments).encode())


def test_a_plain_call_answers_what_mcp_gives_as_structured_content(
        served: tuple[VaultBox, EchoMcpServer]) -> None:
    _, server = served
    plain = _call(server, "echo_get_note", path=ADA)

    async def over_mcp(client: Client) -> Any:
        return (await client.call_tool("echo_get_note", {"path": ADA})).structured_content

    assert plain.status_code == 200
    assert plain.headers["content-type"] == "application/json"
    assert plain.json() == with_client(server, over_mcp)
    assert plain.json()["ok"] is True


def test_a_recorded_call_is_on_disk_when_answered(
        served: tuple[VaultBox, EchoMcpServer]) -> None:
    box, server = served
    answer = _call(server, "echo_habitat_record", session_id="s1", agent_id="agent-a",
                   kind="tool", text="Bash make test", is_error=True, duration_ms=12)
    assert answer.status_code == 200, answer.text
    ids = answer.json()["ids"]
    assert len(ids) == 1
    lines = [json.loads(line) for day in sorted(box.state.glob("vaults/*/habitat/loom/*.jsonl"))
             for line in day.read_text("utf-8").splitlines()]
    assert [(r["id"], r["agent_id"], r["is_error"]) for r in lines] == [(ids[0], "agent-a", True)]


def test_a_write_through_plain_calls_is_one_note_like_over_mcp(
        served: tuple[VaultBox, EchoMcpServer]) -> None:
    box, server = served
    first = _call(server, "echo_capture", title="Grace Hopper", kind="person",
                  body="Wrote the first compiler.")
    again = _call(server, "echo_capture", title="Grace Hopper", kind="person",
                  body="Wrote the first compiler.")
    assert first.status_code == 200 and first.json()["action"] == "created", first.text
    assert again.status_code == 200, again.text  # an update or a gate stop is data
    assert len(list(box.vault.rglob("grace-hopper*.md"))) == 1


def test_a_bad_argument_is_400_naming_the_field_and_writes_nothing(
        served: tuple[VaultBox, EchoMcpServer]) -> None:
    box, server = served
    answer = _call(server, "echo_habitat_record", session_id="s1", kind="tool",
                   text="x", colour="blue")
    assert answer.status_code == 400
    body = answer.json()
    assert body["ok"] is False and body["error"]["code"] == "usage"
    assert "colour" in body["error"]["message"]
    assert not list(box.state.glob("vaults/*/habitat/loom/*.jsonl"))


def test_an_operation_error_keeps_its_code_and_maps_to_a_status(
        served: tuple[VaultBox, EchoMcpServer]) -> None:
    _, server = served
    answer = _call(server, "echo_get_note", path="resources/people/nobody-here.md")
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "not-found"


@pytest.mark.parametrize(("path", "body", "headers", "method", "status"), [
    ("/call/echo_no_such_tool", b"{}", AUTH, "POST", 404),
    ("/call/echo_get_note", None, AUTH, "GET", 405),
    ("/call/echo_get_note", b"{}", {"Authorization": AUTH["Authorization"],
                                    "Content-Type": "text/plain"}, "POST", 415),
    ("/call/echo_get_note", b"{not json", AUTH, "POST", 400),
    ("/call/echo_get_note", b"[1, 2]", AUTH, "POST", 400),
    ("/call/echo_get_note", b'{"path": "x"}', {"Content-Type": "application/json"}, "POST", 401),
    ("/call/echo_get_note", b'{"path": "x"}', {**AUTH, "Authorization": "Bearer wrong"},
     "POST", 401),
    ("/call/echo_get_note", b'{"path": "x"}', {**AUTH, "Host": "rebound.example.com"},
     "POST", 421),
    ("/call/echo_get_note", b'{"path": "x"}', {**AUTH, "Origin": "http://evil.example"},
     "POST", 403),
])
def test_what_is_refused_before_the_call_and_how(
        served: tuple[VaultBox, EchoMcpServer], path: str, body: bytes | None,
        headers: dict[str, str], method: str, status: int) -> None:
    box, server = served
    before = sorted(p.name for p in box.vault.rglob("*.md"))
    answer = _post(server, path, body, headers=headers, method=method)
    assert answer.status_code == status, answer.text
    if status not in (401, 403, 421):  # those are the guard's own answers
        assert answer.json()["ok"] is False and answer.json()["message"]
    assert sorted(p.name for p in box.vault.rglob("*.md")) == before


def test_an_oversized_body_is_413_and_nothing_recorded(
        served: tuple[VaultBox, EchoMcpServer]) -> None:
    box, server = served
    huge = json.dumps({"session_id": "s1", "kind": "note",
                       "text": "x" * (MAX_BODY_BYTES + 10)}).encode()
    answer = _post(server, "/call/echo_habitat_record", huge)
    assert answer.status_code == 413
    assert not list(box.state.glob("vaults/*/habitat/loom/*.jsonl"))


def test_an_empty_body_is_no_arguments(served: tuple[VaultBox, EchoMcpServer]) -> None:
    _, server = served
    answer = _post(server, "/call/echo_health", b"")
    assert answer.status_code == 200, answer.text
    assert answer.json()["ok"] is True


def test_deeply_nested_json_is_400_not_a_crash(served: tuple[VaultBox, EchoMcpServer]) -> None:
    _, server = served
    deep = b"[" * 200_000 + b"]" * 200_000
    answer = _post(server, "/call/echo_get_note", deep)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "usage"
