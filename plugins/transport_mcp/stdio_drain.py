"""Over stdio, a client that closes stdin still gets every answer it asked for.

The SDK's dispatcher ends its read loop at the end of stdin and cancels every request
still running: each is answered "Connection closed" (and a write already handed to a
worker thread lands anyway, so a client that retries writes it twice), and the process
exits. A client may well write its requests and close stdin at once, without waiting.

``DrainingReader`` (around the stdin stream) notes each request read in an
``AnswerLedger``; ``AnsweringWriter`` (around the stdout stream) settles it once its
answer (result or error) is handed to the SDK's stdout writer, which writes and flushes
it before the process exits. At the end of stdin the reader holds the end back until
every request read is settled, then lets the SDK shut down as before. A request the
client cancels (``notifications/cancelled``) is settled then: the SDK never answers it.
After ``drain_timeout`` seconds the end goes through anyway (logged), and the SDK
answers what is left "Connection closed".
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING

import anyio
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params
from mcp.shared.message import SessionMessage
from mcp.types import (
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)

from plugins.transport_mcp.stream_wrap import ReadWrapper, WriteWrapper

if TYPE_CHECKING:  # the SDK's stream protocols (a private module: types only)
    from mcp.shared._stream_protocols import ReadStream, WriteStream

__all__ = ["DRAIN_TIMEOUT", "AnswerLedger", "AnsweringWriter", "DrainingReader"]

log = logging.getLogger("echo_memory.mcp")
#: Longest wait for the last answers after stdin closes (a write waits at most 60 s for
#: the server's write lock, then answers an error).
DRAIN_TIMEOUT = 120.0


class AnswerLedger:
    """The requests read and not yet settled (answered or cancelled), by request id
    (``"7"`` and ``7`` are one id, as for the SDK). Used from the event loop only."""

    def __init__(self) -> None:
        self._open: Counter[RequestId] = Counter()
        self._idle: anyio.Event | None = None

    @property
    def waiting(self) -> int:
        """How many requests read are not settled yet."""
        return sum(self._open.values())

    def opened(self, request_id: RequestId) -> None:
        """A request with ``request_id`` was read."""
        self._open[coerce_request_id(request_id)] += 1

    def settled(self, request_id: RequestId) -> None:
        """A request with ``request_id`` was answered or cancelled (an id not waiting:
        nothing)."""
        key = coerce_request_id(request_id)
        if self._open[key] > 1:
            self._open[key] -= 1
        else:
            self._open.pop(key, None)
        if not self._open and self._idle is not None:
            self._idle.set()

    async def drained(self, timeout: float) -> bool:
        """Wait until no request waits (true), or ``timeout`` seconds (false)."""
        if not self._open:
            return True
        self._idle = anyio.Event()
        with anyio.move_on_after(timeout):
            await self._idle.wait()
        return not self._open


class DrainingReader(ReadWrapper):
    """``inner`` (stdin's message stream) noting requests and cancellations in
    ``ledger``; its end is held back until ``ledger`` is drained (module docstring)."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], ledger: AnswerLedger,
                 *, drain_timeout: float = DRAIN_TIMEOUT) -> None:
        super().__init__(inner)
        self._ledger = ledger
        self._drain_timeout = drain_timeout

    async def receive(self) -> SessionMessage | Exception:
        """The next item; ``anyio.EndOfStream`` once stdin has ended and every request
        read is settled (or ``drain_timeout`` passed)."""
        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            await self._drain()
            raise
        if isinstance(item, SessionMessage):
            message = item.message
            if isinstance(message, JSONRPCRequest):
                self._ledger.opened(message.id)
            elif (isinstance(message, JSONRPCNotification)
                  and message.method == "notifications/cancelled"):
                cancelled = cancelled_request_id_from_params(message.params)
                if cancelled is not None:
                    self._ledger.settled(cancelled)
        return item

    async def _drain(self) -> None:
        waiting = self._ledger.waiting
        if not waiting:
            return
        log.info("stdio: stdin closed; answering %d request(s) still running first", waiting)
        if not await self._ledger.drained(self._drain_timeout):
            log.warning("stdio: %d request(s) still unanswered %.0f s after stdin closed; "
                        "they are cancelled", self._ledger.waiting, self._drain_timeout)


class AnsweringWriter(WriteWrapper):
    """``inner`` (stdout's message stream) settling in ``ledger`` each answer it sends
    (also when sending it failed: nothing else will answer that request)."""

    def __init__(self, inner: WriteStream[SessionMessage], ledger: AnswerLedger) -> None:
        super().__init__(inner)
        self._ledger = ledger

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        try:
            await self._inner.send(item)
        finally:
            if isinstance(message, (JSONRPCResponse, JSONRPCError)) and message.id is not None:
                self._ledger.settled(message.id)
