"""The HTTP app: streamable HTTP (stateless, JSON responses) on ``/mcp`` behind a bearer
token, and an open ``GET /health``.

On a loopback bind every path gets the SDK's own DNS-rebinding check with one set of
``loopback_security`` settings: a ``Host`` that is not a loopback name is 421, an
``Origin`` that is not one is 403 — ``/health`` included, so a web page cannot read it
through a rebound name. The SDK applies it on ``/mcp`` (after the token check);
``HttpGuard``, a plain ASGI middleware in front of the SDK's app, everywhere else (not
twice on ``/mcp``: it costs ~10 us a request). ``HttpGuard`` also:

* requires ``Authorization: Bearer <token>`` on everything but ``/health``, compared in
  constant time (``hmac.compare_digest``); otherwise 401 with ``WWW-Authenticate:
  Bearer`` and a JSON body saying what to do (logged as one line without the presented
  credential, and the path with control characters escaped);
* sends ``/call/<tool>`` to ``PlainCalls`` (the same tools as plain JSON POSTs, without
  MCP: see ``plain_calls``), after the same checks;
* lets only POST through to ``/mcp``: the server is stateless with JSON responses, so a
  GET (SSE) stream would have nothing to deliver and never end; an authenticated
  request with any other method is 405 with ``Allow: POST`` (what the SDK answers on the
  2026 protocol, and what the streamable HTTP spec asks of a server that offers no
  stream).

Lifespan and other non-HTTP scopes pass through (the SDK's session manager starts in the
lifespan). POST bodies over ``MAX_BODY_BYTES`` are 413 (the SDK's own limit).
"""

from __future__ import annotations

import hmac
import json
import logging
from typing import Any

from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from echo_core import terminal_safe
from plugins.transport_mcp.bearer import is_loopback
from plugins.transport_mcp.health import health_report
from plugins.transport_mcp.plain_calls import CALL_PREFIX, PlainCalls, respond_json
from plugins.transport_mcp.server import EchoMcpServer

log = logging.getLogger("echo_memory.mcp")
MCP_PATH = "/mcp"
HEALTH_PATH = "/health"
OPEN_PATHS = frozenset({HEALTH_PATH})
MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE  # 4 MiB
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_UNAUTHORIZED = json.dumps({
    "error": "unauthorized",
    "message": "send 'Authorization: Bearer <token>' (ECHO_MCP_TOKEN, or the mcp-token file "
               "in the echo-memory state dir)",
}).encode()
_NOT_ALLOWED = json.dumps({
    "error": "method-not-allowed",
    "message": "this server is stateless and answers in JSON: POST JSON-RPC to /mcp (it "
               "offers no GET event stream)",
}).encode()


def loopback_security(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection for a bind to ``host`` when it is loopback: the ``Host``
    header must name 127.0.0.1, localhost, [::1] or ``host`` as given (any port, or
    none), an ``Origin`` (when sent) ``http://`` one of those. ``None`` for any other
    bind: names it is reached by are unknown here, and the token guards it."""
    if not is_loopback(host):
        return None
    given = host.strip()
    given = f"[{given.strip('[]')}]" if ":" in given else given
    names = dict.fromkeys((*LOOPBACK_NAMES, given))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[form for name in names for form in (name, f"{name}:*")],
        allowed_origins=[form for name in names
                         for form in (f"http://{name}", f"http://{name}:*")])


def printable(text: str, limit: int = 200) -> str:
    """``text`` safe for a log line read in a terminal: control and format characters
    (ESC, BEL, CR, RLO, ...) escaped as ``\\x1b`` / ``\\u202e``, at most ``limit``
    characters kept (a request path is the client's to choose)."""
    clipped = text[:limit] + ("..." if len(text) > limit else "")
    return terminal_safe(clipped, one_line=True)


class HttpGuard:
    """ASGI middleware: Host / Origin (but on ``/mcp``), bearer token, POST-only ``/mcp``
    (see module docstring). ``app`` is the wrapped SDK app."""

    def __init__(self, app: ASGIApp, token: str,
                 security: TransportSecuritySettings | None = None,
                 plain: ASGIApp | None = None) -> None:
        self.app = app
        self._plain = plain
        self._expected = token.encode("utf-8")
        self._security = TransportSecurityMiddleware(security) if security else None

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
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path")
        if self._security is not None and path != MCP_PATH:  # the SDK checks /mcp itself
            rejected = await self._security.validate_request(Request(scope))
            if rejected is not None:
                await rejected(scope, receive, send)
                return
        if path not in OPEN_PATHS and not self.authorized(scope):
            log.warning("auth: rejected %s %s (missing or wrong bearer token)",
                        printable(scope.get("method", "?")), printable(path or "?"))
            await respond_json(send, 401, _UNAUTHORIZED,
                           (b"www-authenticate", b'Bearer realm="echo-memory"'))
            return
        if path == MCP_PATH and scope.get("method") != "POST":
            await respond_json(send, 405, _NOT_ALLOWED, (b"allow", b"POST"))
            return
        if self._plain is not None and path and path.startswith(CALL_PREFIX):
            await self._plain(scope, receive, send)
            return
        await self.app(scope, receive, send)


def build_http_app(server: EchoMcpServer, token: str, *, host: str = "127.0.0.1") -> Any:
    """The ASGI app for ``server``: ``/mcp`` (stateless, JSON responses, token required,
    POST only), ``/call/<tool>`` (the same tools as plain JSON, token required) and
    ``/health`` (no token; 200 when the vault is reachable, else 503, same JSON body), all
    behind the Host / Origin check of a loopback ``host`` (the
    bind address)."""
    security = loopback_security(host)

    async def health(request: Request) -> Response:
        try:
            report = await server.runner.read(health_report)
        except Exception as exc:  # noqa: BLE001 - e.g. a broken config file: never a 500
            report = {"ok": False, "vault_reachable": False, "outbox_depth": None,
                      "index_age_s": None, "error": f"{type(exc).__name__}: {exc}"}
        return JSONResponse(report, status_code=200 if report["ok"] else 503)

    server.custom_route(HEALTH_PATH, methods=["GET"])(health)

    app = server.streamable_http_app(streamable_http_path=MCP_PATH, json_response=True,
                                     stateless_http=True, host=host,
                                     transport_security=security,
                                     max_request_body_size=MAX_BODY_BYTES)
    plain = PlainCalls(server.operations, server.runner, max_body=MAX_BODY_BYTES)
    return HttpGuard(app, token, security, plain)
