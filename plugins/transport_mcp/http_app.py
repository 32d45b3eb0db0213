"""The HTTP app: streamable HTTP (stateless, JSON responses) on ``/mcp`` behind a bearer
token, and an open ``GET /health``.

``BearerAuth`` is a plain ASGI middleware: every HTTP request except ``/health`` needs
``Authorization: Bearer <token>``, compared in constant time (``hmac.compare_digest``);
otherwise 401 with ``WWW-Authenticate: Bearer`` and a JSON body saying what to do. A
rejection is logged as one line without the presented credential. Lifespan and other
non-HTTP scopes pass through (the SDK's session manager starts in the lifespan).
"""

from __future__ import annotations

import hmac
import json
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from plugins.transport_mcp.health import health_report
from plugins.transport_mcp.server import EchoMcpServer

log = logging.getLogger("echo_memory.mcp")
MCP_PATH = "/mcp"
HEALTH_PATH = "/health"
OPEN_PATHS = frozenset({HEALTH_PATH})
_UNAUTHORIZED = json.dumps({
    "error": "unauthorized",
    "message": "send 'Authorization: Bearer <token>' (ECHO_MCP_TOKEN, or the mcp-token file "
               "in the echo-memory state dir)",
}).encode()


class BearerAuth:
    """ASGI middleware requiring the bearer token on everything but ``OPEN_PATHS``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = token.encode("utf-8")

    def authorized(self, scope: Scope) -> bool:
        """True when the request carries exactly the expected bearer token."""
        presented = b""
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                scheme, _, credential = value.partition(b" ")
                if scheme.lower() == b"bearer":
                    presented = credential.strip()
                break
        return hmac.compare_digest(presented, self._expected) and bool(presented)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS or self.authorized(scope):
            await self.app(scope, receive, send)
            return
        log.warning("auth: rejected %s %s (missing or wrong bearer token)",
                    scope.get("method", "?"), scope.get("path", "?"))
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"),
            (b"www-authenticate", b'Bearer realm="echo-memory"'),
            (b"content-length", str(len(_UNAUTHORIZED)).encode()),
        ]})
        await send({"type": "http.response.body", "body": _UNAUTHORIZED})


def build_http_app(server: EchoMcpServer, token: str, *, host: str = "127.0.0.1") -> Any:
    """The ASGI app for ``server``: ``/mcp`` (stateless, JSON responses, token required)
    and ``/health`` (open; 200 when the vault is reachable, else 503, same JSON body).

    ``host`` is the bind address: the SDK turns on DNS-rebinding protection (Host header
    checks) for loopback binds."""

    async def health(request: Request) -> Response:
        try:
            report = await server.runner.read(health_report)
        except Exception as exc:  # noqa: BLE001 - e.g. a broken config file: never a 500
            report = {"ok": False, "vault_reachable": False, "outbox_depth": None,
                      "index_age_s": None, "error": f"{type(exc).__name__}: {exc}"}
        return JSONResponse(report, status_code=200 if report["ok"] else 503)

    server.custom_route(HEALTH_PATH, methods=["GET"])(health)

    app = server.streamable_http_app(streamable_http_path=MCP_PATH, json_response=True,
                                     stateless_http=True, host=host)
    return BearerAuth(app, token)
