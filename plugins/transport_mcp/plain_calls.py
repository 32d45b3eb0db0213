"""Plain JSON calls: ``POST /call/<tool>`` runs one served operation without MCP.

The same operations the MCP server serves, behind the same bearer token, Host / Origin
check and ``ToolRunner`` (its locks, worker threads and call log), for clients that are
not MCP clients: a script with ``curl``, a fleet's record shipper, a load test. It skips
what MCP adds per call (the JSON-RPC envelope, the SDK's session, middleware and result
models, ~1 ms of CPU a call measured in ``bench/perf_habitat.py``), so a server takes
several times more small calls a second this way.

Contract:

* ``POST /call/<tool>`` with ``Content-Type: application/json`` and a JSON object body:
  the tool's arguments, exactly as over MCP (checked by the same ``parse_params``; an
  unknown or bad field, or a string that is not UTF-8 text, e.g. a ``"\\ud800"`` escape,
  is a ``usage`` error naming it). An empty body is ``{}``.
* The answer is the tool result's structured content as JSON, the object an MCP client
  gets as ``structuredContent``: the envelope (``ok``, ``action``, ``data``, ...), or
  ``{"ok": false, "action": "error", "message", "error": {code, exit, message}}``.
* Status: 200 for an envelope (a gate stop, ``ok: false``, is data: 200 too); an error's
  status follows its code: ``usage`` 400, ``not-found`` 404, ``lock-held`` 409,
  ``duplicate-gate`` 409, ``not-configured`` 501, ``unavailable`` 503, anything else 500.
  Before the call: 404 for a tool this server does not serve (code ``not-found``, exit
  44 like any not-found), 405 for another method, 415 for another content type, 400 for a
  body that is not a JSON object, 413 for a body over the size limit. Every error body
  says what to do, with its code's exit (``usage`` 2).

Nothing is written before the answer is decided: a call that fails validation never
reaches the operation.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from starlette.types import Receive, Scope, Send

from echo_core import CODE_NAMES, ExitCode, Operation, ParamsInvalid, parse_params
from plugins.transport_mcp.results import error_outcome
from plugins.transport_mcp.runner import ToolRunner

__all__ = ["CALL_PREFIX", "PlainCalls", "respond_json", "status_for"]

CALL_PREFIX = "/call/"
_STATUS = {"usage": 400, "not-found": 404, "lock-held": 409, "duplicate-gate": 409,
           "not-configured": 501, "unavailable": 503}


def status_for(structured: Mapping[str, Any], is_error: bool) -> int:
    """The HTTP status of a tool result (see the module docstring)."""
    if not is_error:
        return 200
    error = structured.get("error")
    code = error.get("code") if isinstance(error, Mapping) else None
    return _STATUS.get(code, 500) if isinstance(code, str) else 500


_EXITS = {name: int(code) for code, name in CODE_NAMES.items()}


def _problem(error: str, message: str) -> bytes:
    """An error body refusing a request before any call: ``error`` is a code name, whose
    exit code it carries (``usage`` 2, ``not-found`` 44), as a tool's errors do."""
    return json.dumps({"ok": False, "action": "error", "message": message,
                       "error": {"code": error, "exit": _EXITS[error],
                                 "message": message}}).encode()


async def respond_json(send: Send, status: int, body: bytes,
                       *extra: tuple[bytes, bytes]) -> None:
    """One whole JSON response (``body`` already encoded) with ``extra`` headers."""
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()), *extra]})
    await send({"type": "http.response.body", "body": body})


async def _body(receive: Receive, limit: int) -> bytes | None:
    """The request body, or ``None`` once it grows past ``limit`` bytes."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(parts)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


def _is_json(scope: Scope) -> bool:
    for key, value in scope.get("headers", ()):
        if key == b"content-type":
            media: bytes = value.split(b";", 1)[0].strip().lower()
            return media == b"application/json"
    return False


class PlainCalls:
    """The ``/call/<tool>`` handler for ``operations`` (by tool name) run by ``runner``;
    call it only for an authorized request whose path starts with ``CALL_PREFIX``."""

    def __init__(self, operations: Mapping[str, Operation[Any]], runner: ToolRunner, *,
                 max_body: int) -> None:
        self._operations = dict(operations)
        self._runner = runner
        self._max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = str(scope.get("path", ""))[len(CALL_PREFIX):]
        op = self._operations.get(name)
        if op is None:
            await respond_json(send, 404, _problem("not-found", (
                f"this server serves no tool {name[:80]!r}; POST /call/<tool> with one of "
                f"the MCP tool names (tools/list over /mcp lists them)")))
            return
        if scope.get("method") != "POST":
            await respond_json(send, 405, _problem("usage", f"POST a JSON object of {name}'s "
                                                       "arguments"), (b"allow", b"POST"))
            return
        if not _is_json(scope):
            await respond_json(send, 415, _problem("usage", "send the arguments as a JSON "
                                                       "object with Content-Type: "
                                                       "application/json"))
            return
        raw = await _body(receive, self._max_body)
        if raw is None:
            await respond_json(send, 413, _problem("usage", f"the body is over "
                                                       f"{self._max_body} bytes; send less "
                                                       "per call"))
            return
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError) as exc:  # not JSON, or nested past the stack
            arguments = exc
        if not isinstance(arguments, dict):
            await respond_json(send, 400, _problem("usage", "the body must be a JSON object of "
                                                       f"{name}'s arguments"))
            return
        await self._run(send, op, arguments)

    async def _run(self, send: Send, op: Operation[Any], arguments: dict[str, Any]) -> None:
        start = time.perf_counter()
        try:
            params = parse_params(op.params, arguments, surface="mcp", operation=op.tool_name)
        except ParamsInvalid as exc:
            outcome = error_outcome(ExitCode.USAGE, exc.message, exc.fields)
            self._runner.log_call(op.tool_name, start, outcome.label)
        else:
            outcome = await self._runner.call(op, params, start=start, readable=False)
        result = outcome.result
        structured = result.structured_content or {}
        body = json.dumps(structured, ensure_ascii=False).encode()
        await respond_json(send, status_for(structured, bool(result.is_error)), body)


# every error code has a status: a new code must be placed in the table above
assert set(_STATUS) <= set(CODE_NAMES.values())
