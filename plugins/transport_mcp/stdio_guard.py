"""MCP over stdio that always answers: the SDK's ``stdio_server`` with two guards between
its streams and the server loop.

* ``LenientReader``: the SDK parses each line with a JSON reader that refuses a lone
  UTF-16 surrogate escape (``"\\ud800"``, valid JSON) and then drops the line without an
  answer, so the client waits forever. A line it refused that Python's ``json`` reads and
  that is a JSON-RPC message goes on to the server as that message, where ``parse_params``
  answers a ``usage`` error naming the argument. Any other refused line is answered with
  a JSON-RPC error (``refusal``: -32700 for a line that is no JSON, -32600 for one that
  is no request, with its id when it has one), where the SDK would drop it silently and
  leave a client waiting on that id.
* ``SendableWriter``: a message that cannot be written as UTF-8 JSON (a string holding a
  lone surrogate) would kill the SDK's writer task, and with it the server. An answer
  (result or error) is replaced by a JSON-RPC internal error for the same request id;
  another message (a notification, a request to the client) is dropped. Both are logged.

``serve_stdio_guarded(server)`` runs a low-level server with them until stdin closes and
every request read is answered (``stdio_drain``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pydantic
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)

from plugins.transport_mcp.stdio_drain import AnsweringWriter, AnswerLedger, DrainingReader
from plugins.transport_mcp.stream_wrap import ReadWrapper, WriteWrapper

if TYPE_CHECKING:  # the SDK's stream protocols (a private module: types only)
    from mcp.shared._stream_protocols import ReadStream, WriteStream

__all__ = ["UNSENDABLE", "LenientReader", "SendableWriter", "recovered", "refusal", "sendable",
           "serve_stdio_guarded"]

log = logging.getLogger("echo_memory.mcp")
UNSENDABLE = ("the answer holds text that is not valid UTF-8 (a lone surrogate) and could "
              "not be sent; the server log has details. Report a bug")


def recovered(item: Exception) -> SessionMessage | None:
    """The message of a line the SDK's reader refused as JSON (``item``, its
    ``ValidationError``) when Python's ``json`` reads it as a JSON-RPC message; else
    ``None``."""
    if not isinstance(item, pydantic.ValidationError):
        return None
    errors = item.errors(include_url=False)
    if len(errors) != 1 or errors[0].get("type") != "json_invalid":
        return None
    line = errors[0].get("input")
    if not isinstance(line, str):
        return None
    try:
        raw = json.loads(line)
        message = jsonrpc_message_adapter.validate_python(raw, by_name=False)
    except (ValueError, RecursionError):  # ValidationError is a ValueError
        return None
    return SessionMessage(message)


def refusal(item: Exception) -> SessionMessage | None:
    """The JSON-RPC error answering a line the SDK's reader refused and ``recovered``
    could not read (``item``, its ``ValidationError``): -32700 (id null) for a line that
    is no JSON, -32600 for JSON that is no JSON-RPC message (with its ``id`` when it has
    a usable one, else null), so a client waiting on that id is told; ``None`` for what
    looks like the client's answer to a request of ours (it has ``result`` or ``error``)
    and for any other exception."""
    if not isinstance(item, pydantic.ValidationError):
        return None
    errors = item.errors(include_url=False)
    if any(error.get("type") == "json_invalid" for error in errors):
        data = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON")
        return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=data))
    raw = next((error.get("input") for error in errors
                if isinstance(error.get("input"), dict)), None)
    if isinstance(raw, dict) and ("result" in raw or "error" in raw):
        return None
    found = raw.get("id") if isinstance(raw, dict) else None
    usable = isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool))
    data = ErrorData(code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 "
                     "request or notification (jsonrpc, method, params)")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=found if usable else None,
                                       error=data))


class LenientReader(ReadWrapper):
    """``inner`` (the SDK's stdin stream) with refused lines recovered (``recovered``);
    a line that cannot be is answered through ``reply`` (``refusal``), then handed on
    (the SDK drops it)."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception],
                 reply: Callable[[SessionMessage], Awaitable[None]] | None = None) -> None:
        super().__init__(inner)
        self._reply = reply

    async def receive(self) -> SessionMessage | Exception:
        item = await self._inner.receive()
        if isinstance(item, Exception):
            message = recovered(item)
            if message is not None:
                return message
            answer = refusal(item) if self._reply is not None else None
            if answer is not None and self._reply is not None:
                log.info("stdio: answered a line that is no JSON-RPC message with %s",
                         answer.message.error.code)  # type: ignore[union-attr]
                await self._reply(answer)
        return item


def sendable(message: SessionMessage) -> SessionMessage | None:
    """``message`` when it can be written as UTF-8 JSON (what the SDK's writer does);
    else an internal error answering the same request, or ``None`` (drop it)."""
    wire = message.message
    try:
        wire.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:  # PydanticSerializationError: a lone surrogate in a string
        pass
    else:
        return message
    if isinstance(wire, (JSONRPCResponse, JSONRPCError)) and wire.id is not None:
        log.error("stdio: the answer to request %r holds text that is not valid UTF-8; "
                  "sent an internal error instead", wire.id)
        error = JSONRPCError(jsonrpc="2.0", id=wire.id,
                             error=ErrorData(code=INTERNAL_ERROR, message=UNSENDABLE))
        return SessionMessage(error, metadata=message.metadata)
    log.error("stdio: dropped a %s that holds text that is not valid UTF-8",
              type(wire).__name__)
    return None


class SendableWriter(WriteWrapper):
    """``inner`` (the SDK's stdout stream) sent only what it can write (``sendable``)."""

    def __init__(self, inner: WriteStream[SessionMessage]) -> None:
        super().__init__(inner)

    async def send(self, item: SessionMessage, /) -> None:
        checked = sendable(item)
        if checked is not None:
            await self._inner.send(checked)


async def serve_stdio_guarded(server: Server[Any]) -> None:
    """Serve ``server`` (a low-level SDK server) over stdin/stdout with both guards,
    until the client closes stdin and every request it sent is answered (``stdio_drain``:
    the answers reach stdout before this returns)."""
    ledger = AnswerLedger()
    async with stdio_server() as (read_stream, write_stream):
        reply = SendableWriter(write_stream).send  # not a request read: not in the ledger
        await server.run(DrainingReader(LenientReader(read_stream, reply), ledger),
                         SendableWriter(AnsweringWriter(write_stream, ledger)),
                         server.create_initialization_options())
