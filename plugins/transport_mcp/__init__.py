"""transport_mcp: the MCP server (``echo-memory serve``, SPEC §6.2).

The server asks every plugin for tools through ``register_mcp_tools``; this plugin
registers the built-in set through that same hook, so a third-party plugin adds a tool
without touching the server::

    @hookimpl
    def register_mcp_tools(register):
        register("echo_word_count", McpTool("echo_word_count", "Count ...", word_count))

    def word_count(ctx, path: str) -> Envelope: ...   # ctx (EchoContext) first, then
    word_count.echo_access = "read"                     # typed parameters

A tool function takes ``ctx`` first, then typed parameters (``Annotated[int,
Field(ge=1, le=20)]`` for ranges); it returns an ``Envelope`` (or a mapping). Optional
attributes on the function tell the server how it touches the vault (see
``plugins.transport_mcp.access``): ``echo_access`` (``"read"`` runs in parallel; the
default ``"write"`` is serialised), ``echo_lock_param`` (lock only that note path) and
``echo_destructive``.
"""

from __future__ import annotations

from typing import Any

from echo_core.errors import EchoError, ExitCode
from echo_core.hookspecs import Register, hookimpl


@hookimpl(trylast=True)  # trylast: `serve` is listed after the everyday verbs
def register_commands(cli: Any) -> None:
    """Add ``serve`` (its module imports only click; the server loads when it runs)."""
    from plugins.transport_mcp.serve_command import serve

    cli.add_command(serve)


@hookimpl
def register_mcp_tools(register: Register) -> None:
    """Register the built-in tools: load, recall, resolve, get_note, get_scope, health,
    capture, set_scope, link, append_note, triage_inbox and log_session."""
    try:
        from plugins.transport_mcp.read_tools import READ_TOOLS
        from plugins.transport_mcp.write_tools import WRITE_TOOLS
    except ImportError as exc:  # pydantic comes with the MCP SDK
        raise EchoError(f"the MCP tools need the MCP SDK ({exc}); install it with "
                        "pip install 'echo-memory[mcp]'", ExitCode.NOT_CONFIGURED) from exc
    for tool in (*READ_TOOLS, *WRITE_TOOLS):
        register(tool.name, tool)


@hookimpl
def register_build_targets(register: Register) -> None:
    """Contribute ``.mcp.json`` (the stdio server entry) to the ``claude-code`` target."""
    from plugins.transport_mcp.build_part import McpJsonPart

    register("claude-code:transport_mcp", McpJsonPart())
