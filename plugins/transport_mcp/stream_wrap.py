"""``ReadWrapper`` / ``WriteWrapper``: the SDK's stream protocols around another stream.

A wrapper of stdin's message stream (``stdio_guard.LenientReader``,
``stdio_drain.DrainingReader``) implements ``receive`` only; this base gives it the rest
of what the SDK's server loop uses: ``last_context`` (the inner stream's), ``aclose``,
async iteration (ending at ``anyio.EndOfStream``) and the async context manager.
"""

from __future__ import annotations

import contextvars
from types import TracebackType
from typing import TYPE_CHECKING, Self

import anyio
from mcp.shared.message import SessionMessage

if TYPE_CHECKING:  # the SDK's stream protocols (a private module: types only)
    from mcp.shared._stream_protocols import ReadStream, WriteStream

__all__ = ["ReadWrapper", "WriteWrapper"]


class ReadWrapper:
    """Around ``inner``; a subclass defines ``receive`` (its items, then
    ``anyio.EndOfStream``)."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception]) -> None:
        self._inner = inner

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender context of the last item (the SDK reads it when present)."""
        context: contextvars.Context | None = getattr(self._inner, "last_context", None)
        return context

    async def receive(self) -> SessionMessage | Exception:
        """The next item (the inner stream's, as is)."""
        return await self._inner.receive()

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


class WriteWrapper:
    """Around ``inner`` (stdout's message stream: ``stdio_guard.SendableWriter``,
    ``stdio_drain.AnsweringWriter``); a subclass defines ``send``. Closing closes
    ``inner``; it is its own async context manager."""

    def __init__(self, inner: WriteStream[SessionMessage]) -> None:
        self._inner = inner

    async def send(self, item: SessionMessage, /) -> None:
        """Send ``item`` on (as is)."""
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc_val: BaseException | None, exc_tb: TracebackType | None) -> None:
        await self.aclose()
