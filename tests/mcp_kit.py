"""Helpers for the MCP server tests: a seeded vault, an in-memory server, and one scenario
that drives every built-in tool through an SDK ``Client`` (in memory, HTTP or stdio).

Not a test module (no ``test_`` prefix).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio
import jsonschema
from mcp import Client

from echo_core.context import create_context
from echo_core.plugins import PluginHost, create_host
from plugins.transport_mcp.runner import ToolRunner
from plugins.transport_mcp.server import EchoMcpServer, build_server
from tests.capture_kit import TODAY, VaultBox

NOW = f"{TODAY}T09:30:00"
ADA = "resources/people/ada-lovelace.md"
ENGINE = "resources/concepts/analytical-engine.md"
INBOX_TEXT = "Met Grace Hopper at the conference"
INBOX_LINE = f"- {TODAY}: {INBOX_TEXT}"
#: The core's own tools (``echo_core.verbs``).
BUILTIN_TOOLS = {
    "echo_load", "echo_recall", "echo_resolve", "echo_get_note", "echo_get_scope",
    "echo_health", "echo_capture", "echo_set_scope", "echo_link", "echo_append_note",
    "echo_triage_inbox", "echo_log_session", "echo_sweep", "echo_evolve",
    "echo_inbox_review", "echo_reflect",
    "echo_patch_note", "echo_rollup_data", "echo_note_history", "echo_restore_note",
    "echo_ingest", "echo_eval",
}
#: The habitat plugin's tools (``plugins/habitat/refs_*.py``).
HABITAT_TOOLS = {
    # the habitat's record part (plugins/habitat/refs_record.py)
    "echo_habitat_record", "echo_ask_habitat", "echo_habitat_fold", "echo_habitat_fork",
    # the habitat's detect part (plugins/habitat/refs_detect.py)
    "echo_habitat_patterns", "echo_habitat_pattern", "echo_habitat_batches",
    "echo_habitat_batch", "echo_habitat_flag", "echo_habitat_digest", "echo_habitat_status",
    # the habitat's learn part (plugins/habitat/refs_learn.py)
    "echo_store_learning", "echo_habitat_insights",
}
#: Every tool the installed distribution serves.
FULL_TOOLS = BUILTIN_TOOLS | HABITAT_TOOLS
CORE_TOOLS = {"echo_load", "echo_recall", "echo_capture", "echo_triage_inbox",
              "echo_log_session", "echo_health"}
_SENTENCE = ("The analytical engine stored numbers on columns of wheels and read its program "
             "from punched cards, so the engine could loop and branch. ")


def seeded_box(root: Path) -> VaultBox:
    """An initialised vault with two long entity notes (so a small ``budget_chars`` cuts
    excerpts) and one inbox item."""
    box = VaultBox(root).init()
    for title, kind in (("Ada Lovelace", "person"), ("Analytical Engine", "concept")):
        env = box.capture(title, kind=kind, body=_SENTENCE * 4)
        assert env.action == "created", env
    assert box.capture(INBOX_TEXT).action == "inbox"
    return box


def box_env(box: VaultBox, **overrides: str) -> dict[str, str]:
    """The box's isolated environment with ``ECHO_NOW`` pinned too."""
    return box.env(ECHO_NOW=NOW, **overrides)


def make_server(box: VaultBox, *, env: Mapping[str, str] | None = None,
                extra: Iterable[tuple[str, object]] = (), vault: str | None = None,
                profile: str | None = None) -> EchoMcpServer:
    """An in-memory server on ``box`` (entry-point plugins plus ``extra``); close its
    runner with ``server.runner.close()``."""
    env = dict(env if env is not None else box_env(box))
    host: PluginHost = create_host(env=env, extra=list(extra))
    target = vault or str(box.vault)

    def factory() -> Any:
        return create_context(vault=target, state_dir=str(box.state), env=env, host=host)

    return build_server(host, ToolRunner(factory), env=env, profile=profile)


def with_client(server: EchoMcpServer, body: Callable[[Client], Awaitable[Any]]) -> Any:
    """Run ``body(client)`` against ``server`` in memory."""

    async def main() -> Any:
        async with Client(server) as client:
            return await body(client)

    return anyio.run(main)


def subprocess_env(box: VaultBox, **overrides: str) -> dict[str, str]:
    """``os.environ`` without ``ECHO_*`` plus the box's isolated, pinned environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    env.update(box_env(box, **overrides))
    return env


async def call(client: Client, name: str, **arguments: Any) -> tuple[bool, dict[str, Any], str]:
    """``(is_error, structured_content, text)`` of one tool call.

    Checks the result contract: structured content that matches the tool's output schema
    (when the call is not an error), and a text that opens with a 1-3 line summary (a
    blank line then separates the readable result)."""
    result = await client.call_tool(name, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    assert result.structured_content is not None, f"{name}: no structured content"
    summary = text.split("\n\n", 1)[0]
    assert 1 <= len(summary.splitlines()) <= 3, f"{name}: summary must be 1-3 lines: {text!r}"
    if not result.is_error:
        schema = OUTPUT_SCHEMAS.get(name)
        if schema is None:
            tools = (await client.list_tools()).tools
            OUTPUT_SCHEMAS.update({t.name: t.output_schema for t in tools})
            schema = OUTPUT_SCHEMAS[name]
        assert schema, f"{name}: no outputSchema"
        jsonschema.validate(result.structured_content, schema)
    return bool(result.is_error), dict(result.structured_content), text


OUTPUT_SCHEMAS: dict[str, Any] = {}


async def run_scenario(client: Client) -> None:
    """Every built-in tool's happy path, plus a validation error naming the field,
    not-found, gate-as-data and the budget truncation marker. Needs ``seeded_box``."""
    names = {tool.name for tool in (await client.list_tools()).tools}
    assert FULL_TOOLS <= names, FULL_TOOLS - names

    err, data, _ = await call(client, "echo_health")
    assert not err and data["ok"] is True and data["checks"]
    err, data, _ = await call(client, "echo_load", brief=True)
    assert not err and data["action"] == "loaded" and data["digest"]

    err, data, text = await call(client, "echo_recall", query="analytical engine punched cards")
    assert not err and {h["path"] for h in data["primary"]} >= {ADA, ENGINE}
    for hit in data["primary"]:  # the text a model reads carries the result, not a count
        assert hit["path"] in text and hit["excerpt"] in text
    err, data, _ = await call(client, "echo_recall", query="analytical engine", budget_chars=500)
    assert not err and data["truncated"] is True
    cut = [h for h in data["primary"] + data["linked"] if h["truncated"]]
    assert cut and cut[0]["excerpt"].endswith("…")
    assert sum(len(h["excerpt"]) for h in data["primary"] + data["linked"]) <= 500

    err, data, text = await call(client, "echo_recall", query="engine", limit=99)
    assert err and data["error"]["code"] == "usage" and "limit" in data["error"]["fields"]
    assert "limit" in text
    err, data, text = await call(client, "echo_recall", query="engine", colour="red")
    assert err and "colour" in text and data["error"]["fields"] == ["colour"]

    err, data, _ = await call(client, "echo_resolve", mention="ada lovelace")
    assert not err and data["match"] is True and data["path"] == ADA
    err, data, _ = await call(client, "echo_get_note", path=ADA, max_chars=100)
    assert not err and data["truncated"] is True and len(data["content"]) <= 100
    err, data, _ = await call(client, "echo_get_note", path="resources/people/nobody.md")
    assert err and data["error"]["code"] == "not-found"

    err, data, _ = await call(client, "echo_get_scope")
    assert not err and data["action"] == "scope"
    err, data, _ = await call(client, "echo_set_scope", scope="Ship the MCP server")
    assert not err and data["scope"] == "Ship the MCP server"

    err, data, text = await call(client, "echo_capture", title="Lovelace, Ada", kind="person")
    assert not err and data["ok"] is False and data["action"] == "duplicate-gate"
    assert data["candidates"][0]["slug"] == "ada-lovelace" and "merge_into" in text
    err, data, _ = await call(client, "echo_capture", title="Charles Babbage", kind="person",
                              body="Designed the analytical engine.", tags=["inventor"])
    assert not err and data["action"] == "created"
    babbage = data["path"]
    err, data, _ = await call(client, "echo_link", a="ada-lovelace", b=babbage)
    assert not err and {data["a"], data["b"]} == {ADA, babbage}
    err, data, _ = await call(client, "echo_append_note", path=ADA,
                              line=f"- {TODAY}: appended over MCP")
    assert not err and data["action"] == "appended"

    err, data, _ = await call(client, "echo_triage_inbox")
    assert not err and [item["line"] for item in data["items"]] == [INBOX_LINE]
    proposal = {"line": INBOX_LINE, "title": "Grace Hopper", "kind": "person"}
    err, data, _ = await call(client, "echo_triage_inbox", proposals=[proposal])
    assert not err and data["items"][0]["classification"] == "create", data
    err, data, _ = await call(client, "echo_triage_inbox", proposals=[proposal], apply=True)
    assert not err and data["items"][0]["classification"] == "created"

    session = {"slug": "mcp-server", "log_body": "## Goal\nServe memory over MCP",
               "reflect": [{"title": "Prefers small files", "kind": "semantic",
                            "body": "Keep files under 400 lines", "confidence": 0.9}]}
    err, data, _ = await call(client, "echo_log_session", **session)
    assert not err and data["action"] == "dry-run"
    err, data, _ = await call(client, "echo_log_session", apply=True, **session)
    assert not err and data["action"] == "session-ended"
