"""The MCP server in memory (the SDK's ``Client(server)``): every tool, the error map,
strict parameters, profiles, plugin-contributed tools, concurrency and the call log."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import attrs
import pytest
from mcp import Client

from echo_core.errors import EchoError
from echo_core.hookspecs import hookimpl
from echo_core.models import Envelope
from echo_core.operations import Operation, param
from echo_core.operations.registry import registration_problems
from plugins.transport_mcp.runner import DEFAULT_READ_WORKERS, DEFAULT_WRITE_WORKERS
from plugins.transport_mcp.server import EchoMcpServer
from tests.capture_kit import TODAY, VaultBox
from tests.mcp_kit import (
    ADA,
    CORE_TOOLS,
    FULL_TOOLS,
    box_env,
    call,
    make_server,
    run_scenario,
    seeded_box,
    with_client,
)


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return seeded_box(tmp_path)


@pytest.fixture
def server(box: VaultBox) -> Iterator[EchoMcpServer]:
    built = make_server(box)
    yield built
    built.runner.close()


def test_every_tool_works_in_memory(server: EchoMcpServer) -> None:
    with_client(server, run_scenario)


def test_default_profile_lists_exactly_the_builtin_tools(server: EchoMcpServer) -> None:
    async def body(client: Client) -> set[str]:
        return {t.name for t in (await client.list_tools()).tools}

    assert with_client(server, body) == FULL_TOOLS


def test_core_profile_lists_exactly_the_core_tools(box: VaultBox) -> None:
    core = make_server(box, env=box_env(box, ECHO_MCP_TOOLS="core"))
    try:
        async def body(client: Client) -> set[str]:
            return {t.name for t in (await client.list_tools()).tools}

        assert with_client(core, body) == CORE_TOOLS
    finally:
        core.runner.close()


def test_unknown_profile_is_a_usage_error(box: VaultBox) -> None:
    with pytest.raises(EchoError) as caught:
        make_server(box, env=box_env(box, ECHO_MCP_TOOLS="everything"))
    assert caught.value.code_name == "usage" and "ECHO_MCP_TOOLS" in caught.value.message


def test_schemas_carry_ranges_defaults_and_forbid_extras(server: EchoMcpServer) -> None:
    async def body(client: Client) -> dict[str, Any]:
        return {t.name: t for t in (await client.list_tools()).tools}

    tools = with_client(server, body)
    recall = tools["echo_recall"].input_schema
    assert recall["additionalProperties"] is False and recall["required"] == ["query"]
    assert recall["properties"]["limit"] == {**recall["properties"]["limit"], "minimum": 1,
                                             "maximum": 20, "default": 8}
    budget = recall["properties"]["budget_chars"]["anyOf"][0]
    assert (budget["minimum"], budget["maximum"]) == (500, 20000)
    assert "ctx" not in recall["properties"]
    assert tools["echo_recall"].annotations.read_only_hint is True
    assert tools["echo_capture"].annotations.read_only_hint is False
    # load replays the offline outbox first: not read-only (issue 13, item 15)
    assert tools["echo_load"].annotations.read_only_hint is False
    for tool in tools.values():
        assert tool.input_schema["additionalProperties"] is False, tool.name


#: One invalid call per tool and the field its error must name.
INVALID = [
    ("echo_load", {"brief": "maybe"}, "brief"),
    ("echo_recall", {"query": "x", "budget_chars": 100}, "budget_chars"),
    ("echo_recall", {}, "query"),
    ("echo_resolve", {"mention": "ada", "kinds": "person"}, "kinds"),
    ("echo_resolve", {"mention": "ada", "kind": 3}, "kind"),
    ("echo_get_note", {"path": ADA, "max_chars": 0}, "max_chars"),
    ("echo_get_scope", {"verbose": True}, "verbose"),
    ("echo_set_scope", {"scope": ""}, "scope"),
    ("echo_health", {"deep": "very"}, "deep"),
    ("echo_capture", {"title": "X", "tags": "not-a-list"}, "tags"),
    ("echo_capture", {"title": "X", "kind": "person", "date": "yesterday"}, "date"),
    ("echo_link", {"a": ADA}, "b"),
    ("echo_append_note", {"path": ADA, "line": "two\nlines"}, "line"),
    ("echo_append_note", {"path": "../outside.md", "line": "x"}, "path"),
    ("echo_triage_inbox", {"proposals": [{"line": "x", "titel": "typo"}]}, "proposals[0].titel"),
    ("echo_log_session", {"slug": "Not Kebab", "log_body": "x"}, "slug"),
    ("echo_log_session", {"slug": "s", "log_body": "x", "reflect": [{"title": "t", "body": "b"}]},
     "reflect[0].confidence"),
]


@pytest.mark.parametrize(("tool", "arguments", "field"), INVALID,
                         ids=[f"{t}-{f}" for t, _, f in INVALID])
def test_invalid_arguments_fail_naming_the_field(server: EchoMcpServer, box: VaultBox, tool: str,
                                                 arguments: dict[str, Any], field: str) -> None:
    before = box.tree_digest()
    err, data, text = with_client(server, lambda c: call(c, tool, **arguments))
    assert err and data["ok"] is False and data["error"]["code"] == "usage"
    assert field in text and field in data["error"]["message"]
    assert box.tree_digest() == before, "a rejected call wrote to the vault"


def test_unknown_parameter_lists_the_allowed_ones(server: EchoMcpServer) -> None:
    err, data, _ = with_client(server, lambda c: call(c, "echo_link", a="x", b="y", c="z"))
    assert err and data["error"]["fields"] == ["c"]
    assert "unknown parameter" in data["message"] and "allowed: a, b" in data["message"]


def test_values_never_echo_back_in_validation_errors(server: EchoMcpServer) -> None:
    err, data, text = with_client(
        server, lambda c: call(c, "echo_recall", query="q", limit="SECRET-VALUE-123"))
    assert err and "limit" in text and "SECRET-VALUE-123" not in str(data)


NOT_FOUND = [
    ("echo_get_note", {"path": ADA, "section": "No Such Heading"}),
    ("echo_link", {"a": ADA, "b": "nobody-at-all"}),
    ("echo_capture", {"title": "Ada L", "kind": "person", "merge_into": "no-such-slug"}),
]


@pytest.mark.parametrize(("tool", "arguments"), NOT_FOUND, ids=[t for t, _ in NOT_FOUND])
def test_missing_things_are_not_found_errors(server: EchoMcpServer, tool: str,
                                             arguments: dict[str, Any]) -> None:
    err, data, text = with_client(server, lambda c: call(c, tool, **arguments))
    assert err and data["error"]["code"] == "not-found" and data["error"]["exit"] == 44
    assert text.startswith("error (not-found):")


def test_missing_section_error_lists_the_real_headings(server: EchoMcpServer) -> None:
    _, data, _ = with_client(server, lambda c: call(c, "echo_get_note", path=ADA, section="Nope"))
    assert "Related" in data["message"]


def test_gate_stop_is_data_not_an_error(server: EchoMcpServer, box: VaultBox) -> None:
    before = box.tree_digest()
    err, data, _ = with_client(
        server, lambda c: call(c, "echo_capture", title="Lovelace, Ada", kind="person"))
    assert err is False and data["ok"] is False and data["action"] == "duplicate-gate"
    assert box.tree_digest() == before


def test_dry_run_capture_writes_nothing(server: EchoMcpServer, box: VaultBox) -> None:
    before = box.tree_digest()
    err, data, _ = with_client(server, lambda c: call(c, "echo_capture", title="Grace Hopper",
                                                      kind="person", dry_run=True))
    assert not err and data["action"] == "dry-run:create"
    assert box.tree_digest() == before


# --- plugin-contributed tools ---------------------------------------------------------


@attrs.frozen(kw_only=True)
class WordCountParams:
    path: str = param(help="Vault-relative note path.", min_length=1)
    minimum: int = param(0, help="Smallest count worth reporting.", ge=0, le=10)


@attrs.frozen
class WordCount:
    words: int
    minimum: int


def word_count(ctx: Any, p: WordCountParams) -> Envelope:
    """A third-party operation: count the words of a note."""
    words = len(ctx.vault.read_note(p.path).text.split())
    return Envelope(True, "counted", f"{words} words", WordCount(words, p.minimum))


@attrs.frozen(kw_only=True)
class NoParams:
    """Nothing."""


def explode(ctx: Any, p: NoParams) -> Envelope:
    raise RuntimeError("secret internals")


class WordCountPlugin:
    @hookimpl
    def register_operations(self, register: Any) -> None:
        register("word-count", Operation(
            "word-count", "Count the words of a note.", "Count the words of a note. "
            "Returns the count.", WordCountParams, word_count, WordCount, profile="core"))
        register("explode", Operation("explode", "Always crashes.", "Always crashes.",
                                      NoParams, explode, cli=None))


@pytest.fixture
def plugged(box: VaultBox) -> Iterator[EchoMcpServer]:
    built = make_server(box, extra=[("word_count", WordCountPlugin())])
    yield built
    built.runner.close()


def test_a_plugin_tool_appears_and_runs(plugged: EchoMcpServer) -> None:
    async def body(client: Client) -> tuple[set[str], Any, Any]:
        names = {t.name for t in (await client.list_tools()).tools}
        ok = await call(client, "echo_word_count", path=ADA)
        bad = await call(client, "echo_word_count", path=ADA, minimum=11)
        return names, ok, bad

    names, (err, data, text), (bad_err, _, bad_text) = with_client(plugged, body)
    assert {"echo_word_count", "echo_explode"} <= names and FULL_TOOLS <= names
    assert not err and data["words"] > 40 and text.startswith(f"{data['words']} words")
    assert bad_err and "minimum" in bad_text


def test_a_plugin_tool_in_the_core_profile_is_served_in_core(box: VaultBox) -> None:
    core = make_server(box, extra=[("word_count", WordCountPlugin())], profile="core")
    try:
        names = with_client(core, lambda c: c.list_tools())
        assert {t.name for t in names.tools} == CORE_TOOLS | {"echo_word_count"}
    finally:
        core.runner.close()


def test_a_crashing_tool_is_an_error_without_its_internals(plugged: EchoMcpServer) -> None:
    err, data, text = with_client(plugged, lambda c: call(c, "echo_explode"))
    assert err and data["error"]["code"] == "failure" and "RuntimeError" in text
    assert "secret internals" not in str(data) + text


def test_a_malformed_operation_is_left_out_and_reported_naming_its_plugin(box: VaultBox) -> None:
    bad = SimpleNamespace(register_operations=hookimpl(
        lambda register: register("bad", Operation("bad", "x", "x", dict, lambda c, p: p))))
    lenient = {**box_env(box), "ECHO_STRICT_PLUGINS": ""}
    server = make_server(box, env=lenient, extra=[("bad", bad)])
    try:
        assert "echo_bad" not in server.tool_names and FULL_TOOLS <= set(server.tool_names)
        problems = registration_problems(server.runner.context().host)
        assert any("'bad'" in p.message and "not an attrs class" in p.message
                   and "bad" in p.plugins for p in problems)
    finally:
        server.runner.close()
    strict = {**box_env(box), "ECHO_STRICT_PLUGINS": "1"}
    with pytest.raises(EchoError, match="'bad'.*not an attrs class.*plugin 'bad'"):
        make_server(box, env=strict, extra=[("bad", bad)])


# --- the call log ---------------------------------------------------------------------


def test_one_log_line_per_call_without_arguments(server: EchoMcpServer,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    async def body(client: Client) -> None:
        await call(client, "echo_recall", query="zebra-marker-query")
        await call(client, "echo_recall", query="x", bogus=1)
        await call(client, "echo_get_note", path="missing-marker.md")

    with caplog.at_level(logging.INFO, logger="echo_memory.mcp"):
        with_client(server, body)
    lines = [r.getMessage() for r in caplog.records if r.name == "echo_memory.mcp"]
    assert [line.split()[2] for line in lines] == [
        "outcome=ok", "outcome=error:usage", "outcome=error:not-found"]
    assert all(line.startswith("tool=echo_") and " ms=" in line for line in lines)
    assert not any("marker" in line for line in lines)


# --- concurrency ----------------------------------------------------------------------


def test_parallel_appends_to_one_note_lose_nothing(server: EchoMcpServer, box: VaultBox) -> None:
    lines = [f"- {TODAY}: parallel line {i:02d}" for i in range(24)]

    async def body(client: Client) -> list[Any]:
        results: list[Any] = [None] * len(lines)

        async def one(i: int) -> None:
            results[i] = await call(client, "echo_append_note", path=ADA, line=lines[i])

        async with anyio.create_task_group() as group:
            for i in range(len(lines)):
                group.start_soon(one, i)
        return results

    results = with_client(server, body)
    assert all(not err and data["action"] == "appended" for err, data, _ in results)
    text = box.read(ADA)
    assert all(text.count(line) == 1 for line in lines)


@pytest.mark.parametrize("inline", [False, True])
def test_parallel_reads_agree_and_each_worker_has_its_own_context(
        server: EchoMcpServer, inline: bool) -> None:
    server.runner.inline_reads = inline

    async def body(client: Client) -> list[list[str]]:
        out: list[list[str]] = []

        async def one() -> None:
            _, data, _ = await call(client, "echo_recall", query="analytical engine")
            out.append([h["path"] for h in data["primary"]])

        async with anyio.create_task_group() as group:
            for _ in range(32):
                group.start_soon(one)
        return out

    answers = with_client(server, body)
    assert len(answers) == 32 and all(a == answers[0] for a in answers) and answers[0]
    assert 1 <= server.runner.contexts_built <= DEFAULT_READ_WORKERS + DEFAULT_WRITE_WORKERS
    if inline:  # every read ran on the event loop's thread: one context served them all
        assert server.runner.contexts_built == 1
