"""Serve the MCP app WITHOUT its bearer-token layer, on 127.0.0.1 only, for the protocol's
conformance suite (``@modelcontextprotocol/conformance`` has no option to send a header).
Auth itself is covered by tests/test_mcp_transports.py. Never use this to serve a vault.

    python bench/conformance_server.py --vault V --state-dir S --port 8798
    npx conformance server --url http://127.0.0.1:8798/mcp
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--port", type=int, default=8798)
    opts = parser.parse_args()
    import uvicorn

    from echo_core.plugins import create_host
    from plugins.transport_mcp.http_app import build_http_app
    from plugins.transport_mcp.serving import _server, configure_logging

    configure_logging()
    server = _server(create_host(), os.environ, opts.vault, opts.state_dir)
    app = build_http_app(server, "unused-token", host="127.0.0.1").app  # the unwrapped app
    uvicorn.run(app, host="127.0.0.1", port=opts.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
