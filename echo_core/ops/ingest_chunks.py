"""Cutting a document's markdown into parts sized for recall. Pure.

``split_chunks(markdown)`` returns the parts in order, each a ``Chunk``: its text and the
heading it falls under (the first heading inside it, else the one in force where it
starts). The rules, in order:

1. Blocks are separated by blank lines; a heading line (``#`` to ``######``) is a block of
   its own. A fenced code block (```` ``` ````) is never split inside.
2. A part grows block by block up to ``TARGET`` characters (1,500). A heading ends the part
   before it when the part already holds ``MIN_AT_HEADING`` characters (600), so parts
   follow the document's sections without being tiny.
3. A block longer than ``MAX`` (2,400) is cut at sentence ends, else at spaces, else hard.

Every character of the input's non-blank lines lands in exactly one part, in order.
"""

from __future__ import annotations

import re

import attrs

TARGET = 1500
MIN_AT_HEADING = 600
MAX = 2400
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


@attrs.frozen
class Chunk:
    """One part: ``text`` (markdown, trimmed) and ``heading`` (plain text, may be '')."""

    text: str
    heading: str


def heading_of(line: str) -> str | None:
    """The text of a markdown heading line, or None when ``line`` is not one."""
    found = _HEADING.match(line)
    return found.group(2).strip() if found else None


def _blocks(markdown: str) -> list[str]:
    blocks: list[str] = []
    current: list[str] = []
    fenced = False

    def close() -> None:
        if current:
            blocks.append("\n".join(current).strip("\n"))
            current.clear()

    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            current.append(line)
            continue
        if fenced:
            current.append(line)
            continue
        if not line.strip():
            close()
        elif heading_of(line) is not None:
            close()
            blocks.append(line.strip())
        else:
            current.append(line)
    close()
    return [b for b in blocks if b.strip()]


def _cut_long(block: str) -> list[str]:
    """``block`` in pieces of at most ``MAX`` characters (sentences, else words)."""
    if len(block) <= MAX:
        return [block]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(block):
        while len(sentence) > MAX:
            cut = sentence.rfind(" ", 0, MAX)
            cut = cut if cut > MAX // 2 else MAX
            head, sentence = sentence[:cut].rstrip(), sentence[cut:].lstrip()
            if current:
                pieces.append(current)
                current = ""
            pieces.append(head)
        if current and len(current) + 1 + len(sentence) > TARGET:
            pieces.append(current)
            current = ""
        current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return [p for p in pieces if p.strip()]


def split_chunks(markdown: str) -> list[Chunk]:
    """See the module docstring; an empty text has no parts."""
    chunks: list[Chunk] = []
    parts: list[str] = []
    size = 0
    in_force = ""
    start_heading = ""
    first_inside = ""

    def emit() -> None:
        nonlocal parts, size, first_inside
        if parts:
            chunks.append(Chunk("\n\n".join(parts), first_inside or start_heading))
        parts, size, first_inside = [], 0, ""

    for block in _blocks(markdown):
        title = heading_of(block)
        if title is not None and size >= MIN_AT_HEADING:
            emit()
        for piece in _cut_long(block):
            if parts and size + 2 + len(piece) > TARGET and heading_of(parts[-1]) is None:
                emit()
            if not parts:
                start_heading = in_force
            parts.append(piece)
            size += len(piece) + (2 if size else 0)
        if title is not None:
            in_force = title
            if not first_inside:
                first_inside = title
    emit()
    return chunks
