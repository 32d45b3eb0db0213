"""Claude Code transcript lines -> ``TranscriptTurn`` records, defensively.

A transcript is JSONL: one JSON object per line (``reference/claude-code.md``). The
format is internal to Claude Code and changes between releases, so this reader keeps
only what it understands and skips the rest without raising:

- ``type`` ``user`` / ``assistant`` lines become turns; ``system``, ``attachment``,
  ``progress``, ``summary``, ``file-history-snapshot`` and any unknown type are skipped
  (counted in ``ParseTally.skipped``);
- ``isMeta`` lines (caveats, injected command output) are skipped;
- ``isSidechain`` lines (a subagent's conversation) are kept, flagged ``sidechain``:
  they are never the operator speaking;
- user ``content`` is a string or a list of blocks: ``text`` blocks give ``texts``,
  ``tool_result`` blocks give ``ToolResult`` (``is_error``, text of the result);
- assistant ``content`` blocks: ``text`` -> ``texts``, ``tool_use`` -> ``ToolUse``
  (``id``, ``name``, ``input`` as a dict), ``thinking`` and anything else skipped;
- a line that is not JSON, not an object, truncated (the last line of a live session),
  bad UTF-8 (decoded with replacement characters), over ``MAX_LINE_CHARS``, or with
  fields of the wrong type is skipped (``ParseTally.bad``), never an exception.

``read_transcript_lines(path)`` reads a file the same way: line by line, a line longer
than ``MAX_LINE_BYTES`` is drained in chunks and dropped, never held whole.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_LINE_CHARS",
    "ParseTally",
    "ToolResult",
    "ToolUse",
    "TranscriptTurn",
    "parse_lines",
    "read_transcript_lines",
]

#: A longer line is dropped unparsed (base64 images and huge tool outputs live there).
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_LINE_CHARS = MAX_LINE_BYTES
#: Text kept per block; mining only reads the head of a long message.
MAX_TEXT_CHARS = 20_000
_CHUNK = 1024 * 1024
_TOOL_RESULT_TEXT = 2_000


@attrs.frozen
class ToolUse:
    """An assistant's tool call: its ``id`` (matched by a later ``ToolResult``)."""

    id: str
    name: str
    input: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class ToolResult:
    """The result of tool call ``tool_use_id``; ``text`` is its head (2000 chars)."""

    tool_use_id: str
    is_error: bool
    text: str = ""


@attrs.frozen
class TranscriptTurn:
    """One understood user or assistant line.

    ``ref`` names it for a reader: the line's ``uuid``, or ``"line N"`` (1-based) when
    it has none. ``session`` is the line's ``sessionId`` (or the caller's fallback).
    """

    line_no: int
    role: str  # "user" | "assistant"
    session: str
    uuid: str | None = None
    sidechain: bool = False
    timestamp: str | None = None
    cwd: str | None = None
    texts: tuple[str, ...] = ()
    tool_uses: tuple[ToolUse, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()

    @property
    def ref(self) -> str:
        """The line's uuid, or ``"line N"``."""
        return self.uuid or f"line {self.line_no}"

    @property
    def text(self) -> str:
        """The text blocks joined by blank lines."""
        return "\n\n".join(self.texts)


@attrs.define
class ParseTally:
    """What a parse saw: ``turns`` kept, ``skipped`` (understood, not needed), ``bad``."""

    lines: int = 0
    turns: int = 0
    skipped: int = 0
    bad: int = 0


def read_transcript_lines(path: str | os.PathLike[str]) -> Iterator[bytes]:
    """Yield the lines of ``path`` as bytes; an over-long line yields ``b""`` instead.

    Raises ``OSError`` only when the file cannot be opened; the last line may lack its
    newline (a session still being written) and is yielded as it is.
    """
    with open(path, "rb") as handle:
        while True:
            line = handle.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while True:  # drain the rest of the over-long line
                    rest = handle.readline(_CHUNK)
                    if not rest or rest.endswith(b"\n"):
                        break
                yield b""
                continue
            yield line


def parse_lines(lines: Iterable[str | bytes], *, session: str = "",
                tally: ParseTally | None = None) -> Iterator[TranscriptTurn]:
    """Yield a ``TranscriptTurn`` per understood line (see the module docstring).

    ``session`` names lines without a ``sessionId``. Never raises on content.
    """
    count = tally if tally is not None else ParseTally()
    for line_no, raw in enumerate(lines, start=1):
        count.lines += 1
        record = _load(raw)
        if record is None:
            count.bad += 1
            continue
        try:
            turn = _turn(record, line_no, session)
        except (TypeError, ValueError, AttributeError, KeyError, RecursionError):
            count.bad += 1
            continue
        if turn is None:
            count.skipped += 1
            continue
        count.turns += 1
        yield turn


def _load(raw: str | bytes) -> dict[str, Any] | None:
    if isinstance(raw, bytes):
        if len(raw) > MAX_LINE_BYTES:
            return None
        raw = raw.decode("utf-8", errors="replace")
    elif not isinstance(raw, str) or len(raw) > MAX_LINE_CHARS:
        return None
    raw = raw.strip()
    if not raw.startswith("{"):
        return None
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _string(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _turn(record: Mapping[str, Any], line_no: int, session: str) -> TranscriptTurn | None:
    kind = record.get("type")
    if kind not in ("user", "assistant") or record.get("isMeta") is True:
        return None
    message = record.get("message")
    if not isinstance(message, Mapping):
        return None
    content = message.get("content")
    texts: list[str] = []
    uses: list[ToolUse] = []
    results: list[ToolResult] = []
    if isinstance(content, str):
        if kind == "user":
            texts.append(content[:MAX_TEXT_CHARS])
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping):
                _block(block, kind, texts, uses, results)
    else:
        return None
    if not (texts or uses or results):
        return None
    return TranscriptTurn(
        line_no=line_no, role=kind, session=_string(record.get("sessionId")) or session,
        uuid=_string(record.get("uuid")), sidechain=record.get("isSidechain") is True,
        timestamp=_string(record.get("timestamp")), cwd=_string(record.get("cwd")),
        texts=tuple(texts),
        tool_uses=tuple(uses), tool_results=tuple(results))


def _block(block: Mapping[str, Any], kind: str, texts: list[str], uses: list[ToolUse],
           results: list[ToolResult]) -> None:
    block_type = block.get("type")
    if block_type == "text":
        text = _string(block.get("text"))
        if text:
            texts.append(text[:MAX_TEXT_CHARS])
    elif block_type == "tool_use" and kind == "assistant":
        use_id, name = _string(block.get("id")), _string(block.get("name"))
        tool_input = block.get("input")
        if use_id and name:
            uses.append(ToolUse(use_id, name, dict(tool_input)
                                if isinstance(tool_input, Mapping) else {}))
    elif block_type == "tool_result" and kind == "user":
        use_id = _string(block.get("tool_use_id"))
        if use_id:
            results.append(ToolResult(use_id, block.get("is_error") is True,
                                      _result_text(block.get("content"))))


def _result_text(content: object) -> str:
    """A tool result's text: a string, or the text blocks of a list, head only."""
    if isinstance(content, str):
        return content[:_TOOL_RESULT_TEXT]
    if isinstance(content, list):
        parts = [b["text"] for b in content
                 if isinstance(b, Mapping) and b.get("type") == "text"
                 and isinstance(b.get("text"), str)]
        return "\n".join(parts)[:_TOOL_RESULT_TEXT]
    return ""
