"""The MCP server object: every registered operation with an MCP surface, served through
the SDK's ``MCPServer``.

``build_server`` takes the operations of the profile (``ECHO_MCP_TOOLS=core|full``,
default ``full``) from the registry (the built-ins come through ``register_operations``
like any third party's) and lists each as a tool whose input schema (closed:
``additionalProperties: false``) and output schema are derived from its declaration.
``EchoMcpServer.call_tool`` validates arguments with ``parse_params`` (an unknown or bad
parameter is a ``usage`` error naming the field, never its value) and runs the operation
through the ``ToolRunner``. Over stdio it answers every request, even one the SDK's JSON
reader refuses or whose answer cannot be encoded (``stdio_guard``).
"""

from __future__ import annotations

import importlib.metadata
import time
from collections.abc import Mapping, Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations

from echo_core import (
    ExitCode,
    Operation,
    OperationRegistry,
    ParamsInvalid,
    PluginHost,
    input_schema,
    output_schema,
    parse_params,
    usage_error,
)
from plugins.transport_mcp.results import error_outcome
from plugins.transport_mcp.runner import ToolRunner

PROFILE_ENV = "ECHO_MCP_TOOLS"
PROFILES = ("core", "full")
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


def served_operations(host: PluginHost, profile: str) -> list[Operation[Any]]:
    """The operations ``host``'s plugins register that MCP serves in ``profile``
    (a malformed declaration or a tool name claimed twice is a start-up error)."""
    return OperationRegistry.from_host(host).for_mcp(profile)


def _annotations(op: Operation[Any]) -> ToolAnnotations:
    read_only = op.access == "read"
    destructive = None if read_only else op.access == "destructive"
    return ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive,
                           open_world_hint=False)


async def _never_called() -> None:  # the server runs operations itself
    raise RuntimeError("echo-memory tools run through EchoMcpServer.call_tool")


def sdk_tool(op: Operation[Any]) -> Tool:
    """The SDK ``Tool`` listing ``op``: the declaration's input schema (closed) and output
    schema, its description and annotations. Calls never reach its ``fn``."""
    built = Tool.from_function(_never_called, name=op.tool_name,
                               description=op.tool_description, annotations=_annotations(op),
                               structured_output=False)
    built.parameters = input_schema(op, "mcp")
    built.fn_metadata.output_schema = output_schema(op)
    return built


class EchoMcpServer(MCPServer[Any]):
    """``MCPServer`` serving ``operations`` through ``runner``: every call is checked by
    the declaration (``parse_params``: a ``usage`` error naming the fields) and run by the
    runner. ``tool_names`` lists what it serves; ``runner`` is shared with ``/health``."""

    def __init__(self, operations: Sequence[Operation[Any]], runner: ToolRunner) -> None:
        self.runner = runner
        self._operations = {op.tool_name: op for op in operations}
        built = [sdk_tool(op) for op in operations]
        self.tool_names = tuple(self._operations)
        self.operations: Mapping[str, Operation[Any]] = self._operations
        super().__init__(name=SERVER_NAME, version=_version(), instructions=INSTRUCTIONS,
                         tools=built, log_level="WARNING")

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        """Validate ``arguments`` against the operation's declaration, then run it."""
        op = self._operations.get(name)
        if op is None:
            return await super().call_tool(name, arguments, context)
        start = time.perf_counter()
        try:
            params = parse_params(op.params, arguments or {}, surface="mcp",
                                  operation=name)
        except ParamsInvalid as exc:
            outcome = error_outcome(ExitCode.USAGE, exc.message, exc.fields)
            self.runner.log_call(name, start, outcome.label)
            return outcome.result
        outcome = await self.runner.call(op, params, start=start)
        return outcome.result

    async def run_stdio_async(self) -> None:
        """Serve over stdin/stdout, answering every request (see ``stdio_guard``)."""
        from plugins.transport_mcp.stdio_guard import serve_stdio_guarded

        await serve_stdio_guarded(self._lowlevel_server)


def _version() -> str:
    try:
        return importlib.metadata.version("echo-memory")
    except importlib.metadata.PackageNotFoundError:
        return ""


def build_server(host: PluginHost, runner: ToolRunner, *,
                 env: Mapping[str, str] | None = None, profile: str | None = None) -> EchoMcpServer:
    """The server for ``host``'s tools in ``profile`` (default: from ``ECHO_MCP_TOOLS`` in
    ``env``). Errors: 2 for an unknown profile; 1 for a malformed operation."""
    chosen = profile if profile is not None else profile_from_env(env or {})
    if chosen not in PROFILES:
        raise usage_error(f"profile {chosen!r}: use one of {', '.join(PROFILES)}")
    return EchoMcpServer(served_operations(host, chosen), runner)
