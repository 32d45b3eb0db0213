"""The MCP server object: every plugin's tools, served through the SDK's ``MCPServer``.

``build_server`` asks the plugin host for ``register_mcp_tools`` (this plugin's built-ins
come through the same hook as any third party's), keeps the tools of the profile
(``ECHO_MCP_TOOLS=core|full``, default ``full``), and turns each ``McpTool`` into an SDK
tool: the schema comes from the function's signature minus its leading ``ctx``
parameter, with ``additionalProperties: false``.

Unknown parameters: the SDK's argument models silently drop keys they do not know, so
``EchoMcpServer.call_tool`` validates first against a model that forbids extras and
answers with a ``usage`` error naming every offending field (never its value).
"""

from __future__ import annotations

import importlib.metadata
import inspect
import re
import time
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, ValidationError

from echo_core.errors import EchoError, ExitCode, usage_error
from echo_core.plugins import PluginHost
from echo_core.protocols import McpTool
from plugins.transport_mcp.results import validation_outcome
from plugins.transport_mcp.runner import ToolRunner

PROFILE_ENV = "ECHO_MCP_TOOLS"
PROFILES = ("core", "full")
TOOL_NAME = re.compile(r"^echo_[a-z0-9]+(?:_[a-z0-9]+)*$")
SERVER_NAME = "echo-memory"
INSTRUCTIONS = (
    "echo-memory is persistent memory kept as markdown notes. Call echo_load at the start "
    "of a session, echo_recall before answering about past work, people or decisions, "
    "echo_capture to save durable facts and decisions, and echo_log_session at the end."
)


def profile_from_env(env: Mapping[str, str]) -> str:
    """``ECHO_MCP_TOOLS`` (``core`` or ``full``, default ``full``); anything else is 2."""
    raw = env.get(PROFILE_ENV, "").strip().lower() or "full"
    if raw not in PROFILES:
        raise usage_error(f"{PROFILE_ENV}={raw!r}: use one of {', '.join(PROFILES)}")
    return raw


def collect_tools(host: PluginHost) -> list[McpTool]:
    """Every registered tool, validated (an ``McpTool`` under its own ``echo_`` name whose
    function takes ``ctx`` first); a bad one is a start-up error naming it."""
    tools: list[McpTool] = []
    for name, tool in host.collect("register_mcp_tools").items():
        if not isinstance(tool, McpTool):
            raise EchoError(f"MCP tool {name!r} is not an McpTool ({type(tool).__name__}); "
                            "fix or disable the plugin that registers it", ExitCode.FAILURE)
        if tool.name != name or not TOOL_NAME.match(name):
            raise EchoError(f"MCP tool {name!r}: the name must be snake_case with the echo_ "
                            "prefix and equal McpTool.name", ExitCode.FAILURE)
        sdk_signature(tool)  # fails early on an unusable signature
        tools.append(tool)
    return tools


def select_profile(tools: Sequence[McpTool], profile: str) -> list[McpTool]:
    """``core``: only tools whose profile is ``core``; ``full``: all of them."""
    return [t for t in tools if profile == "full" or t.profile == "core"]


def sdk_signature(tool: McpTool) -> inspect.Signature:
    """The signature the SDK sees: the function's parameters after ``ctx``, keyword-only,
    with resolved annotations, returning ``CallToolResult``."""
    function = tool.function
    params = list(inspect.signature(function).parameters.values())
    if not params or params[0].name != "ctx":
        raise EchoError(f"MCP tool {tool.name!r}: its function must take ctx (the "
                        "EchoContext) as the first parameter", ExitCode.FAILURE)
    hints = typing.get_type_hints(function, include_extras=True)
    out = []
    for param in params[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.name.startswith("_"):
            raise EchoError(f"MCP tool {tool.name!r}: parameter {param.name!r} cannot be "
                            "exposed (no *args, **kwargs or leading underscore)", ExitCode.FAILURE)
        out.append(param.replace(kind=param.KEYWORD_ONLY, annotation=hints.get(param.name, Any)))
    return inspect.Signature(out, return_annotation=CallToolResult)


def _annotations(tool: McpTool) -> ToolAnnotations:
    rule = getattr(tool.function, "echo_access", "write")
    read_only = rule == "read"
    destructive = None if read_only else getattr(tool.function, "echo_destructive", None)
    return ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive,
                           open_world_hint=False)


def _handler(tool: McpTool, runner: ToolRunner) -> Callable[..., Awaitable[CallToolResult]]:
    async def handler(**arguments: Any) -> CallToolResult:
        outcome = await runner.call(tool.name, tool.function, arguments)
        return outcome.result

    handler.__signature__ = sdk_signature(tool)  # type: ignore[attr-defined]
    handler.__name__ = tool.name
    handler.__doc__ = tool.description
    return handler


def _strict(model: type[BaseModel], name: str) -> type[BaseModel]:
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    return type(f"{name}Arguments", (model,), {"model_config": config, "__module__": __name__})


def sdk_tool(tool: McpTool, runner: ToolRunner) -> Tool:
    """The SDK ``Tool`` for ``tool``: its handler runs through ``runner``; its argument
    model forbids unknown keys (so the schema says ``additionalProperties: false``)."""
    built = Tool.from_function(_handler(tool, runner), name=tool.name,
                               description=tool.description, annotations=_annotations(tool),
                               structured_output=False)
    strict = _strict(built.fn_metadata.arg_model, tool.name)
    built.fn_metadata.arg_model = strict  # type: ignore[assignment]
    built.parameters = strict.model_json_schema(by_alias=True)
    return built


class EchoMcpServer(MCPServer[Any]):
    """``MCPServer`` serving ``tools`` through ``runner`` with strict argument checks.

    ``tool_names`` lists what it serves; ``runner`` is shared with ``/health``."""

    def __init__(self, tools: Sequence[McpTool], runner: ToolRunner) -> None:
        self.runner = runner
        built = [sdk_tool(t, runner) for t in tools]
        self._tools: dict[str, Tool] = {t.name: t for t in built}
        self.tool_names = tuple(self._tools)
        super().__init__(name=SERVER_NAME, version=_version(), instructions=INSTRUCTIONS,
                         tools=built, log_level="WARNING")

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        """Check ``arguments`` strictly (a ``usage`` error naming the fields), then let the
        SDK validate and run the tool."""
        tool = self._tools.get(name)
        if tool is not None:
            start = time.perf_counter()
            try:
                tool.fn_metadata.validate_arguments(arguments)
            except ValidationError as exc:
                allowed = list(tool.parameters.get("properties", {}))
                outcome = validation_outcome(
                    name, exc.errors(include_input=False, include_url=False), allowed)
                self.runner.log_call(name, start, outcome.label)
                return outcome.result
        return await super().call_tool(name, arguments, context)


def _version() -> str:
    try:
        return importlib.metadata.version("echo-memory")
    except importlib.metadata.PackageNotFoundError:
        return ""


def build_server(host: PluginHost, runner: ToolRunner, *,
                 env: Mapping[str, str] | None = None, profile: str | None = None) -> EchoMcpServer:
    """The server for ``host``'s tools in ``profile`` (default: from ``ECHO_MCP_TOOLS`` in
    ``env``). Errors: 2 for an unknown profile; 1 for a malformed registered tool."""
    chosen = profile if profile is not None else profile_from_env(env or {})
    if chosen not in PROFILES:
        raise usage_error(f"profile {chosen!r}: use one of {', '.join(PROFILES)}")
    return EchoMcpServer(select_profile(collect_tools(host), chosen), runner)
