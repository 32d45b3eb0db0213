"""transport_mcp runs the contract suites of every hook family it implements, and its
descriptions and signatures follow the rules the server relies on."""

from __future__ import annotations

import inspect
from types import ModuleType

import click
import pytest

import plugins.transport_cli
import plugins.transport_mcp
from echo_core.testing import CommandsContract, McpToolsContract, PluginContract
from echo_core.testing.mcp_tools_contract import count_sentences
from plugins.transport_mcp.access import plan_for
from plugins.transport_mcp.read_tools import READ_TOOLS
from plugins.transport_mcp.write_tools import WRITE_TOOLS
from tests.mcp_kit import CORE_TOOLS, FULL_TOOLS


class TestTransportMcpPlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.transport_mcp

    @pytest.fixture
    def plugin_name(self) -> str:
        return "transport_mcp"


class TestTransportMcpTools(McpToolsContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.transport_mcp


class TestTransportMcpCommands(CommandsContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.transport_mcp

    @pytest.fixture
    def reserved_command_names(self) -> set[str]:
        cli = click.Group()
        plugins.transport_cli.register_commands(cli)
        return set(cli.commands) | {"init", "doctor", "plugins"}


def test_builtin_sets_match_the_spec() -> None:
    tools = (*READ_TOOLS, *WRITE_TOOLS)
    assert {t.name for t in tools} == FULL_TOOLS
    assert {t.name for t in tools if t.profile == "core"} == CORE_TOOLS


@pytest.mark.parametrize("tool", [*READ_TOOLS, *WRITE_TOOLS], ids=lambda t: t.name)
def test_builtin_tools_take_ctx_first_and_say_what_when_returns(tool: object) -> None:
    params = list(inspect.signature(tool.function).parameters)  # type: ignore[attr-defined]
    assert params[0] == "ctx"
    description = tool.description  # type: ignore[attr-defined]
    assert count_sentences(description) <= 3 and "Returns" in description


@pytest.mark.parametrize(("name", "arguments", "access", "key"), [
    ("echo_recall", {"query": "x"}, "read", None),
    ("echo_capture", {"title": "x"}, "write", None),
    ("echo_capture", {"title": "x", "dry_run": True}, "read", None),
    ("echo_append_note", {"path": "./inbox//x.md", "line": "y"}, "write", "inbox/x.md"),
    ("echo_triage_inbox", {}, "read", None),
    ("echo_triage_inbox", {"proposals": [{"line": "x"}], "apply": True}, "write", None),
    ("echo_triage_inbox", {"proposals": [{"line": "x"}], "apply": False}, "read", None),
    ("echo_log_session", {"slug": "s", "log_body": "b", "apply": True}, "write", None),
    ("echo_log_session", {"slug": "s", "log_body": "b"}, "read", None),
])
def test_access_plans(name: str, arguments: dict[str, object], access: str,
                      key: str | None) -> None:
    tool = {t.name: t for t in (*READ_TOOLS, *WRITE_TOOLS)}[name]
    plan = plan_for(tool.function, arguments)
    assert (plan.access, plan.lock_key) == (access, key)


def test_an_unmarked_function_is_a_serialised_write() -> None:
    plan = plan_for(lambda ctx: None, {})
    assert plan.is_write and plan.lock_key is None
