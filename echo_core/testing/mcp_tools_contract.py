"""``McpToolsContract``: what a plugin's ``register_mcp_tools`` must register.

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the ``plugin`` fixture::

    from echo_core.testing import McpToolsContract

    class TestRecallTools(McpToolsContract):
        @pytest.fixture
        def plugin(self):
            return plugins.recall_bm25
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

from echo_core.errors import EchoError
from echo_core.protocols import McpTool
from echo_core.testing.plugin_contract import CONTRACT_PLUGIN_NAME, hooks_of, strict_host

TOOL_NAME = re.compile(r"^echo_[a-z0-9]+(?:_[a-z0-9]+)*$")
PROFILES = frozenset({"core", "full"})
MAX_SENTENCES = 3
#: A sentence ends at . ! or ? followed by whitespace and a capital, digit, quote or
#: backtick (so "e.g. a path" is one sentence).
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")


def count_sentences(text: str) -> int:
    """Number of sentences in ``text`` (0 for blank text)."""
    return len([part for part in _SENTENCE_BREAK.split(text.strip()) if part.strip()])


class McpToolsContract:
    """Contract tests for the ``register_mcp_tools`` hook.

    Fixture to override:

    * ``plugin`` -> the plugin object (module) implementing ``register_mcp_tools``.

    Tools are collected through a strict host. Checks: at least one tool; each value is an
    ``McpTool`` whose ``name`` equals the registered name, starts with ``echo_`` and is
    snake_case; the description is non-empty and at most 3 sentences; the function is a
    callable with an inspectable signature; ``profile`` is ``"core"`` or ``"full"``.
    """

    @pytest.fixture
    def plugin(self) -> object:
        raise NotImplementedError("override the `plugin` fixture to return your plugin")

    @staticmethod
    def collect_tools(plugin: object) -> dict[str, Any]:
        """``name -> tool`` as the MCP transport would collect them from ``plugin``."""
        host = strict_host((CONTRACT_PLUGIN_NAME, plugin))
        assert "register_mcp_tools" in hooks_of(host, CONTRACT_PLUGIN_NAME), (
            "the plugin does not implement register_mcp_tools"
        )
        try:
            tools = host.collect("register_mcp_tools")
        except EchoError as exc:
            raise AssertionError(f"collecting MCP tools failed: {exc.message}") from exc
        assert tools, "register_mcp_tools registered no tool"
        return tools

    def test_values_are_mcp_tools_named_as_registered(self, plugin: object) -> None:
        for name, tool in self.collect_tools(plugin).items():
            assert isinstance(tool, McpTool), f"{name!r} registered {tool!r}, not an McpTool"
            assert tool.name == name, f"registered as {name!r} but McpTool.name is {tool.name!r}"

    def test_names_are_prefixed_snake_case(self, plugin: object) -> None:
        for name in self.collect_tools(plugin):
            assert TOOL_NAME.match(name), f"{name!r} must be snake_case starting with 'echo_'"

    def test_descriptions_are_short_and_present(self, plugin: object) -> None:
        for name, tool in self.collect_tools(plugin).items():
            description = tool.description
            assert isinstance(description, str) and description.strip(), (
                f"{name} has no description"
            )
            sentences = count_sentences(description)
            assert sentences <= MAX_SENTENCES, (
                f"{name}: description has {sentences} sentences; keep it to {MAX_SENTENCES} "
                f"(what it does, when to use it, what it returns)"
            )

    def test_functions_are_callable_with_a_signature(self, plugin: object) -> None:
        for name, tool in self.collect_tools(plugin).items():
            assert callable(tool.function), f"{name}: function is not callable"
            inspect.signature(tool.function)  # the transport derives the schema from it

    def test_profiles_are_known(self, plugin: object) -> None:
        for name, tool in self.collect_tools(plugin).items():
            assert tool.profile in PROFILES, f"{name}: profile {tool.profile!r} not in {PROFILES}"
