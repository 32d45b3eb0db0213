"""MCP over stdio that always answers: the SDK's ``stdio_server`` with two guards between
its streams and the server loop.

* ``LenientReader``: the SDK parses each line with a JSON reader that refuses a lone
  UTF-16 surrogate escape (``"\\ud800"``, valid JSON) and then drops the line without an
  answer, so the client waits forever. A line it refused that Python's ``json`` reads and
  that is a JSON-RPC message goes on to the server as that message, where ``parse_params``
  answers a ``usage`` error naming the argument. Anything else passes through as before.
* ``SendableWriter``: a message that cannot be written as UTF-8 JSON (a string holding a
  lone surrogate) would kill the SDK's writer task, and with it the server. An answer
  (result or error) is replaced by a JSON-RPC internal error for the same request id;
  another message (a notification, a request to the client) is dropped. Both are logged.

``serve_stdio_guarded(server)`` runs a low-level server with them until stdin closes and
every request read is answered (``stdio_drain``).
"""

from __future__ import annotations

import contextvars
import json
import logging
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio
import pydantic
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INTERNAL_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)

from plugins.transport_mcp.stdio_drain import AnsweringWriter, AnswerLedger, DrainingReader

if TYPE_CHECKING:  # the SDK's stream protocols (a private module: types only)
    from mcp.shared._stream_protocols import ReadStream, WriteStream

__all__ = ["UNSENDABLE", "LenientReader", "SendableWriter", "recovered", "sendable",
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


class LenientReader:
    """``inner`` (the SDK's stdin stream) with refused lines recovered (``recovered``)."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception]) -> None:
        self._inner = inner

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender context of the last item (the SDK reads it when present)."""
        context: contextvars.Context | None = getattr(self._inner, "last_context", None)
        return context

    async def receive(self) -> SessionMessage | Exception:
        item = await self._inner.receive()
        if isinstance(item, Exception):
            message = recovered(item)
            if message is not None:
                return message
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc_val: BaseException | None, exc_tb: TracebackType | None) -> None:
        await self.aclose()


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


class SendableWriter:
    """``inner`` (the SDK's stdout stream) sent only what it can write (``sendable``)."""

    def __init__(self, inner: WriteStream[SessionMessage]) -> None:
        self._inner = inner

    async def send(self, item: SessionMessage, /) -> None:
        checked = sendable(item)
        if checked is not None:
            await self._inner.send(checked)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc_val: BaseException | None, exc_tb: TracebackType | None) -> None:
        await self.aclose()


async def serve_stdio_guarded(server: Server[Any]) -> None:
    """Serve ``server`` (a low-level SDK server) over stdin/stdout with both guards,
    until the client closes stdin and every request it sent is answered (``stdio_drain``:
    the answers reach stdout before this returns)."""
    ledger = AnswerLedger()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(DrainingReader(LenientReader(read_stream), ledger),
                         SendableWriter(AnsweringWriter(write_stream, ledger)),
                         server.create_initialization_options())
