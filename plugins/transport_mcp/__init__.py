"""transport_mcp: the MCP server (``echo-memory serve``, SPEC §6.2).

The server serves every registered operation that has an MCP surface
(``echo_core.operations``): the core's verbs and any plugin's come through
``register_operations`` alike, so a third-party plugin adds a tool without touching the
server. Each tool's input and output schemas, description, access (read / write /
destructive) and lock are derived from the operation's declaration.
"""


from __future__ import annotations

from typing import TYPE_CHECKING, Any

from echo_core import Register, hookimpl

if TYPE_CHECKING:
    from echo_core import BuildTarget


@hookimpl(trylast=True)  # trylast: `serve` is listed after the everyday verbs
def register_commands(cli: Any) -> None:
    """Add ``serve`` (its module imports only click; the server loads when it runs)."""
    from plugins.transport_mcp.serve_command import serve

    cli.add_command(serve)


@hookimpl
def register_build_targets(register: Register[BuildTarget]) -> None:
    """Contribute ``.mcp.json`` (the stdio server entry) to the ``claude-code`` target."""
    from plugins.transport_mcp.build_part import McpJsonPart

    register("claude-code:transport_mcp", McpJsonPart())
