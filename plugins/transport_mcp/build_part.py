"""transport_mcp's part of the ``claude-code`` build target: ``.mcp.json``.

The entry starts the server over stdio with the installed console script
(``echo-memory serve --stdio``; ``ECHO_MEMORY_BIN`` in Claude Code's settings ``env``
overrides the executable, as for the hooks). stdio needs no token: the server is a child
process of Claude Code. Its tools appear as ``mcp__plugin_echo-memory_echo__<tool>``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MCP_PATH = ".mcp.json"
SERVER_NAME = "echo"


def mcp_document() -> dict[str, Any]:
    """The ``.mcp.json`` object: one stdio server named ``echo``."""
    return {"mcpServers": {SERVER_NAME: {
        "command": "sh",
        "args": ["-c", 'exec "${ECHO_MEMORY_BIN:-echo-memory}" serve --stdio'],
        "env": {},
    }}}


class McpJsonPart:
    """``BuildTarget`` registered as ``claude-code:transport_mcp``: writes ``.mcp.json``
    and returns its relative path. Deterministic."""

    def contribute(self, out_dir: str, context: Any) -> list[str]:
        path = Path(out_dir) / MCP_PATH
        path.write_text(json.dumps(mcp_document(), indent=2) + "\n", encoding="utf-8", newline="\n")
        return [MCP_PATH]
