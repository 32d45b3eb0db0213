"""Markdown note helpers: parse a note, find and edit sections, read links (SPEC §1.3).

Pure functions on note text; no I/O. Headings are ATX (``## Title``) outside fenced code
blocks and outside the frontmatter block. Edits keep the file's line endings and every
byte outside the inserted lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from echo_core.errors import usage_error
from echo_core.frontmatter import line_ending, parse_frontmatter, split_frontmatter
from echo_core.models import Note

__all__ = [
    "append_under_heading",
    "ensure_heading",
    "replace_section_body",
    "section_body",
    "find_section",
    "get_section",
    "headings",
    "line_ending",
    "parse_note",
    "truncate",
    "wikilinks",
]

_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_HEADING_RE = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*")
_CLOSING_HASHES_RE = re.compile(r"(?:^|[ \t]+)#+$")
_HEADING_ARG_RE = re.compile(r"(#{1,6})[ \t]+(.+)")
_WIKILINK_RE = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_INLINE_CODE_RE = re.compile(r"`[^`\n]*`")
_TARGET_END_RE = re.compile(r"[|#]")


def parse_note(path: str, text: str) -> Note:
    """A ``Note`` for ``text`` stored at ``path``: frontmatter, body and any frontmatter
    error filled in. Never raises for bad frontmatter (see ``parse_frontmatter``)."""
    frontmatter, body, error = parse_frontmatter(text)
    return Note(path=path, text=text, frontmatter=frontmatter, body=body, frontmatter_error=error)


def _body_start(text: str) -> int:
    """Offset of the body in ``text`` (after the frontmatter block and any BOM)."""
    return len(text) - len(split_frontmatter(text)[1])


def _scan(text: str, start: int) -> Iterator[tuple[int, int, str, bool]]:
    """Yield ``(start, end, content, in_code)`` for each line from offset ``start``.

    ``end`` includes the line ending, ``content`` excludes it; ``in_code`` is true for
    fence lines and the lines between them.
    """
    fence = ""
    pos = start
    while pos < len(text):
        newline = text.find("\n", pos)
        end = len(text) if newline < 0 else newline + 1
        content = text[pos:end].rstrip("\n").rstrip("\r")
        match = _FENCE_RE.fullmatch(content)
        if not fence:
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                fence = match.group(1)
            yield pos, end, content, bool(fence)
        else:
            closes = (
                match is not None
                and match.group(1)[0] == fence[0]
                and len(match.group(1)) >= len(fence)
                and not match.group(2).strip()
            )
            yield pos, end, content, True
            if closes:
                fence = ""
        pos = end


def _heading_lines(text: str) -> Iterator[tuple[int, int, int, str]]:
    """Yield ``(start, end, level, title)`` for each heading line of the body."""
    for start, end, content, in_code in _scan(text, _body_start(text)):
        if in_code:
            continue
        match = _HEADING_RE.fullmatch(content)
        if match is None:
            continue
        title = _CLOSING_HASHES_RE.sub("", (match.group(2) or "").strip()).strip()
        if title:
            yield start, end, len(match.group(1)), title


def _parse_heading(heading: str) -> tuple[int | None, str]:
    """``"## Notes"`` -> ``(2, "Notes")``; ``"Notes"`` -> ``(None, "Notes")``."""
    raw = heading.strip()
    match = _HEADING_ARG_RE.fullmatch(raw)
    level, title = (len(match.group(1)), match.group(2).strip()) if match else (None, raw)
    if not title or "\n" in title:
        raise usage_error(f"heading {heading!r} is empty or spans lines; give e.g. '## Notes'")
    return level, title


def headings(text: str) -> list[str]:
    """The body's headings in order, normalised (``["# Title", "## Notes"]``)."""
    return ["#" * level + " " + title for _, _, level, title in _heading_lines(text)]


def find_section(text: str, heading: str) -> tuple[int, int] | None:
    """Offsets ``(start, end)`` of the first section titled ``heading``, else None.

    ``heading`` is ``"Notes"`` (any level) or ``"## Notes"`` (that level); titles match
    case-insensitively. ``start`` is the heading line's start; ``end`` is the start of
    the next heading of the same or a higher level, or ``len(text)``. Headings inside
    fenced code blocks do not count. Raises ``usage_error`` for an empty heading.
    """
    want_level, want_title = _parse_heading(heading)
    want = want_title.casefold()
    found: tuple[int, int] | None = None
    for start, _, level, title in _heading_lines(text):
        if found is not None and level <= found[1]:
            return found[0], start
        if found is None and title.casefold() == want and want_level in (None, level):
            found = (start, level)
    return (found[0], len(text)) if found is not None else None


def get_section(text: str, heading: str) -> str | None:
    """The text of the section titled ``heading`` (heading line included), else None."""
    span = find_section(text, heading)
    return text[span[0] : span[1]] if span is not None else None


def section_body(text: str, heading: str) -> str | None:
    """The content of section ``heading`` without its heading line, stripped; None when
    the section is absent."""
    section = get_section(text, heading)
    if section is None:
        return None
    return section.split("\n", 1)[1].strip() if "\n" in section else ""


def replace_section_body(text: str, heading: str, body: str) -> str:
    """Replace the content of section ``heading`` (heading line kept) with ``body``,
    followed by one blank line before the next heading; the section is appended when
    missing. Line endings follow the file's."""
    eol = line_ending(text)
    if find_section(text, heading) is None:
        text = ensure_heading(text, heading)
    span = find_section(text, heading)
    assert span is not None
    start, end = span
    heading_end = text.find("\n", start)
    heading_end = len(text) if heading_end < 0 else heading_end + 1
    if heading_end == len(text) and not text.endswith("\n"):
        text += eol
        heading_end = len(text)
    content = eol.join(body.strip("\n").split("\n")) if body.strip() else ""
    block = (eol + content + eol) if content else ""
    tail = text[end:]
    if tail:
        block += eol
    return text[:heading_end] + block + tail


def ensure_heading(text: str, heading: str, level: int = 2) -> str:
    """Return ``text`` with a section ``heading``, appended at the end when missing.

    ``heading`` may carry its own ``#``s, which override ``level``. The new heading is
    separated by one blank line and written in the file's line ending. Raises
    ``usage_error`` for an empty heading or a level outside 1-6.
    """
    own_level, title = _parse_heading(heading)
    level = own_level or level
    if not 1 <= level <= 6:
        raise usage_error(f"heading level {level} is out of range; use 1 to 6")
    if find_section(text, heading) is not None:
        return text
    eol = line_ending(text)
    line = "#" * level + " " + title + eol
    if not text:
        return line
    if not text.endswith("\n"):
        text += eol
    if text[_body_start(text) :].strip() and not text.endswith(("\n\n", "\n\r\n")):
        text += eol
    return text + line


def append_under_heading(text: str, heading: str, lines: list[str]) -> tuple[str, bool]:
    """Insert ``lines`` at the end of section ``heading``; return ``(text, changed)``.

    The lines go after the last non-blank line of the section's own content (before the
    next heading of any level), creating the heading at the end when missing. Lines may
    contain ``\\n``; they are written in the file's line ending. Idempotent: when the first
    line is already present (ignoring trailing spaces) anywhere in the section, ``text``
    is returned unchanged with ``False``.
    """
    physical = [part.rstrip("\r") for line in lines for part in line.split("\n")]
    if not physical:
        return text, False
    eol = line_ending(text)
    span = find_section(text, heading)
    if span is None:
        text = ensure_heading(text, heading)
        span = find_section(text, heading)
        assert span is not None
    start, end = span
    first = physical[0].rstrip()
    insert_at = -1
    own_content = True
    for line_start, line_end, content, in_code in _scan(text[:end], start):
        if content.rstrip() == first and line_start != start:
            return text, False
        if line_start == start:
            insert_at = line_end
            continue
        if not in_code and _HEADING_RE.fullmatch(content) and content.strip("# \t"):
            own_content = False
        if own_content and content.strip():
            insert_at = line_end
    block = eol.join(physical)
    if text[:insert_at].endswith("\n"):
        return text[:insert_at] + block + eol + text[insert_at:], True
    return text[:insert_at] + eol + block + text[insert_at:], True


def truncate(text: str, max_chars: int) -> tuple[str, bool]:
    """At most ``max_chars`` characters of ``text`` and whether anything was cut.

    The cut falls after the last line break when that keeps at least half of the
    allowance, otherwise exactly at ``max_chars``. Raises ``usage_error`` when
    ``max_chars`` is negative.
    """
    if max_chars < 0:
        raise usage_error(f"max_chars must be 0 or more, got {max_chars}")
    if len(text) <= max_chars:
        return text, False
    cut = text[:max_chars]
    newline = cut.rfind("\n")
    if newline + 1 >= max_chars / 2 and newline >= 0:
        cut = cut[: newline + 1]
    return cut, True


def wikilinks(text: str) -> list[str]:
    """Targets of ``[[target]]``, ``[[target|alias]]`` and ``[[target#heading]]`` links,
    in order of first appearance, without duplicates. Links in fenced code blocks and
    inline code are ignored; embeds (``![[x]]``) count; same-note ``[[#h]]`` links do not.
    """
    seen: dict[str, None] = {}
    if "[[" not in text:
        return []
    if "```" not in text and "~~~" not in text:
        # no fence line possible: one pass over the whole text (neither pattern crosses
        # a line break, so this equals the line-by-line scan)
        chunks: Iterable[str] = (_INLINE_CODE_RE.sub("", text) if "`" in text else text,)
    else:
        chunks = (_INLINE_CODE_RE.sub("", content) for _, _, content, in_code in _scan(text, 0)
                  if not in_code and "[[" in content)
    for chunk in chunks:
        for match in _WIKILINK_RE.finditer(chunk):
            target = _TARGET_END_RE.split(match.group(1), maxsplit=1)[0].rstrip("\\").strip()
            if target:
                seen.setdefault(target, None)
    return list(seen)
