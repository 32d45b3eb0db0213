"""transport_mcp runs the contract suites of every hook family it implements, and its
descriptions and signatures follow the rules the server relies on."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import click
import pytest

import plugins.transport_cli
import plugins.transport_mcp
from echo_core.operations import Operation, parse_params
from echo_core.testing import CommandsContract, PluginContract
from echo_core.testing.operations_contract import count_sentences
from echo_core.verbs import builtin_operations
from plugins.transport_mcp.access import plan_for
from tests.mcp_kit import BUILTIN_TOOLS, CORE_TOOLS, FULL_TOOLS


class TestTransportMcpPlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.transport_mcp

    @pytest.fixture
    def plugin_name(self) -> str:
        return "transport_mcp"


class TestTransportMcpCommands(CommandsContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.transport_mcp

    @pytest.fixture
    def reserved_command_names(self) -> set[str]:
        cli = click.Group()
        plugins.transport_cli.register_commands(cli)
        return set(cli.commands) | {"init", "doctor", "plugins"}


def _builtin() -> dict[str, Operation[Any]]:
    return {op.tool_name: op for op in builtin_operations() if op.mcp is not None}


def _served() -> dict[str, Operation[Any]]:
    """Every tool the installed distribution's plugins serve (the core's and the habitat's)."""
    from echo_core.operations import OperationRegistry
    from echo_core.plugins import create_host

    return {op.tool_name: op for op in OperationRegistry.from_host(create_host(env={})).for_mcp()}


def test_builtin_sets_match_the_spec() -> None:
    tools = _builtin()
    assert set(tools) == BUILTIN_TOOLS
    assert {name for name, op in tools.items() if op.profile == "core"} == CORE_TOOLS
    assert set(_served()) == FULL_TOOLS


@pytest.mark.parametrize("name", sorted(FULL_TOOLS))
def test_builtin_tools_say_what_when_returns(name: str) -> None:
    description = _served()[name].tool_description
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
    op = _builtin()[name]
    plan = plan_for(op, parse_params(op.params, arguments, surface="mcp"))
    assert (plan.access, plan.lock_key) == (access, key)
