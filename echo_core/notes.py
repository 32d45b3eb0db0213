"""Markdown note helpers: parse a note, find and edit sections, read links (SPEC §1.3).

Pure functions on note text; no I/O. Headings are ATX (``## Title``) outside fenced code
blocks, outside comments (``<!-- ... -->`` and Obsidian's ``%% ... %%``, on one line or
across lines) and outside the frontmatter block. Edits keep the file's line endings and
every byte outside the inserted lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import attrs

from echo_core.errors import usage_error
from echo_core.frontmatter import line_ending, parse_frontmatter, split_frontmatter
from echo_core.lazy_pattern import LazyPattern
from echo_core.models import Note

__all__ = [
    "append_under_heading",
    "ensure_heading",
    "find_section",
    "get_section",
    "headings",
    "line_ending",
    "parse_note",
    "replace_section_body",
    "section_body",
    "truncate",
    "wikilinks",
]

_FENCE_RE = LazyPattern(r" {0,3}(`{3,}|~{3,})(.*)")
_HEADING_START_RE = LazyPattern(r" {0,3}(#{1,6})(?=[ \t]|$)")
_HEADING_ARG_RE = LazyPattern(r"(#{1,6})[ \t]+(.+)")
_WIKILINK_RE = LazyPattern(r"\[\[([^\[\]\n]+?)\]\]")
_INLINE_CODE_RE = LazyPattern(r"`[^`\n]*`")
_TARGET_END_RE = LazyPattern(r"[|#]")
_COMMENT_OR_CODE_RE = LazyPattern(r"<!--|%%|`+")
#: What closes each comment opener.
_COMMENT_CLOSERS = {"<!--": "-->", "%%": "%%"}


@attrs.frozen
class _Line:
    """One line of a note: offsets ``[start, end)`` (``end`` past its line ending), its
    ``content`` without the ending, whether it is code (a fence line or inside one), the
    fence still open after it (``""`` when none), and whether it starts inside a comment
    opened on an earlier line (``in_comment``; such a line is never a heading)."""

    start: int
    end: int
    content: str
    in_code: bool
    open_fence: str
    in_comment: bool = False


def parse_note(path: str, text: str) -> Note:
    """A ``Note`` for ``text`` stored at ``path``: frontmatter, body and any frontmatter
    error filled in. Never raises for bad frontmatter (see ``parse_frontmatter``)."""
    frontmatter, body, error = parse_frontmatter(text)
    return Note(path=path, text=text, frontmatter=frontmatter, body=body, frontmatter_error=error)


def _body_start(text: str) -> int:
    """Offset of the body in ``text`` (after the frontmatter block and any BOM)."""
    return len(text) - len(split_frontmatter(text)[1])


def _code_span_end(content: str, mark: str, pos: int) -> int:
    """Where the inline code span opened by the backtick run ``mark`` (ending at ``pos``)
    ends: past the next run of exactly as many backticks; ``pos`` when there is none (the
    backticks are literal text)."""
    found = content.find(mark, pos)
    while found >= 0:
        run_end = found + len(mark)
        while run_end < len(content) and content[run_end] == "`":
            run_end += 1
        if run_end - found == len(mark):
            return run_end
        found = content.find(mark, run_end)
    return pos


def _comment_after(content: str, closer: str) -> str:
    """The closer (``-->`` or ``%%``) of the comment still open after the line ``content``
    when ``closer`` was awaited before it (``""``: none). Outside a comment, ``<!--`` and
    ``%%`` open one, except inside an inline code span (`` `%%` ``)."""
    if not closer and "<!--" not in content and "%%" not in content:
        return ""
    pos = 0
    while pos < len(content):
        if closer:
            found = content.find(closer, pos)
            if found < 0:
                return closer
            pos, closer = found + len(closer), ""
            continue
        match = _COMMENT_OR_CODE_RE.search(content, pos)
        if match is None:
            return ""
        mark = match.group()
        if mark[0] == "`":
            pos = _code_span_end(content, mark, match.end())
        else:
            pos, closer = match.end(), _COMMENT_CLOSERS[mark]
    return closer


def _scan(text: str, start: int, fence: str = "") -> Iterator[_Line]:
    """The lines of ``text`` from offset ``start``, with ``fence`` open before the first
    (and no comment open).

    A line ends after ``\n``; ``\r`` before it (or at the very end) belongs to the ending.
    A fence opens on a line of 3+ backticks or tildes (up to 3 spaces in; a backtick
    fence's info string has no backtick) and closes on a line of the same character, at
    least as long, with nothing else but spaces; left open, it runs to the end (CommonMark).
    Outside code, ``<!--`` opens a comment up to the next ``-->`` and ``%%`` one up to the
    next ``%%`` (on the same line or a later one; left open, to the end, as Obsidian
    shows it); a fence line inside a comment opens no code.
    """
    pos = start
    comment = ""
    while pos < len(text):
        newline = text.find("\n", pos)
        end = len(text) if newline < 0 else newline + 1
        content = text[pos:end].rstrip("\n").rstrip("\r")
        if comment:
            comment = _comment_after(content, comment)
            yield _Line(pos, end, content, False, "", True)
            pos = end
            continue
        match = _FENCE_RE.fullmatch(content)
        if not fence:
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                fence = match.group(1)
            else:
                comment = _comment_after(content, "")
            yield _Line(pos, end, content, bool(fence), fence)
        else:
            closes = (
                match is not None
                and match.group(1)[0] == fence[0]
                and len(match.group(1)) >= len(fence)
                and not match.group(2).strip()
            )
            if closes:
                fence = ""
            yield _Line(pos, end, content, True, fence)
        pos = end


def _open_fence_at_end(text: str, start: int, fence: str = "") -> str:
    """The fence still open at the end of ``text`` scanned from ``start`` (``""``: none)."""
    for line in _scan(text, start, fence):
        fence = line.open_fence
    return fence


def _clean_title(raw: str) -> str:
    """A heading's title: surrounding space and a closing ``#`` sequence removed."""
    title = raw.strip()
    bare = title.rstrip("#")
    if not bare:
        return ""
    return (bare if bare != title and bare[-1] in " \t" else title).strip()


def _heading_of(content: str) -> tuple[int, str] | None:
    """``(level, title)`` when the line ``content`` is an ATX heading with a title."""
    match = _HEADING_START_RE.match(content)
    if match is None:
        return None
    title = _clean_title(content[match.end() :])
    return (len(match.group(1)), title) if title else None


def _heading_line(level: int, title: str) -> str:
    """The heading line (no ending) that reads back as ``(level, title)``."""
    line = "#" * level + " " + title
    return line if _clean_title(title) == title else line + " #"


def _heading_lines(text: str) -> Iterator[tuple[_Line, int, str]]:
    """Yield ``(line, level, title)`` for each heading line of the body."""
    for line in _scan(text, _body_start(text)):
        heading = None if line.in_code or line.in_comment else _heading_of(line.content)
        if heading is not None:
            yield line, heading[0], heading[1]


def _parse_heading(heading: str) -> tuple[int | None, str]:
    """``"## Notes"`` -> ``(2, "Notes")``; ``"Notes"`` -> ``(None, "Notes")``."""
    raw = heading.strip()
    match = _HEADING_ARG_RE.fullmatch(raw)
    level, title = (len(match.group(1)), _clean_title(match.group(2))) if match else (
        None, _clean_title(raw))
    if not title or "\n" in title:
        raise usage_error(f"heading {heading!r} is empty or spans lines; give e.g. '## Notes'")
    return level, title


def headings(text: str) -> list[str]:
    """The body's headings in order, normalised (``["# Title", "## Notes"]``)."""
    return ["#" * level + " " + title for _, level, title in _heading_lines(text)]


def _find(text: str, want_level: int | None, want_title: str) -> tuple[int, int] | None:
    want = want_title.casefold()
    found: tuple[int, int] | None = None
    for line, level, title in _heading_lines(text):
        if found is not None and level <= found[1]:
            return found[0], line.start
        if found is None and title.casefold() == want and want_level in (None, level):
            found = (line.start, level)
    return (found[0], len(text)) if found is not None else None


def find_section(text: str, heading: str) -> tuple[int, int] | None:
    """Offsets ``(start, end)`` of the first section titled ``heading``, else None.

    ``heading`` is ``"Notes"`` (any level) or ``"## Notes"`` (that level); titles match
    case-insensitively. ``start`` is the heading line's start; ``end`` is the start of
    the next heading of the same or a higher level, or ``len(text)``. Headings inside
    fenced code blocks or comments (``<!-- -->``, ``%% %%``) do not count. Raises
    ``usage_error`` for an empty heading.
    """
    return _find(text, *_parse_heading(heading))


def before_trailing_related(text: str, line: str) -> str | None:
    """``text`` with ``line`` added as the last line of its content when the note ends
    with a ``## Related`` section (the links echo-memory keeps there stay last and apart):
    right after the last line before that heading, ended as that line is ended. Every
    other byte stays, the blank lines before the heading too (one blank line is added
    when there was none). None when the note has no trailing ``## Related`` (append at
    the end as usual)."""
    span = find_section(text, "## Related")
    if span is None or span[1] != len(text) or not text[:span[0]].strip():
        return None
    head = text[:span[0]]  # ends with a line break: the heading starts a line
    cut = head.index("\n", len(head.rstrip("\r\n"))) + 1  # past the last filled line
    eol = "\r\n" if head.endswith("\r\n", 0, cut) else "\n"
    gap = head[cut:] or eol
    return head[:cut] + line + eol + gap + text[span[0]:]


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


def _complete(text: str, eol: str) -> str:
    """``text`` with its last line ended: a trailing lone ``\r`` becomes ``\r\n``."""
    if not text or text.endswith("\n"):
        return text
    return text + ("\n" if text.endswith("\r") else eol)


def _physical(lines: Iterable[str]) -> list[str]:
    """Lines split on ``\n``, each without a trailing ``\r``."""
    return [part.rstrip("\r") for line in lines for part in line.split("\n")]


def _closed(lines: list[str]) -> list[str]:
    """``lines`` plus a closing fence line when they leave a fence open."""
    fence = _open_fence_at_end("\n".join(lines), 0)
    return lines + [fence] if fence else lines


def _ensure(text: str, heading: str, level: int) -> tuple[str, int, int]:
    """``(text, start, end)``: ``text`` with section ``heading`` (added when missing) and
    that section's offsets. A fence left open at the end is closed before a new heading."""
    own_level, title = _parse_heading(heading)
    level = own_level or level
    if not 1 <= level <= 6:
        raise usage_error(f"heading level {level} is out of range; use 1 to 6")
    span = _find(text, own_level, title)
    if span is not None:
        return text, span[0], span[1]
    eol = line_ending(text)
    line = _heading_line(level, title) + eol
    text = _complete(text, eol)
    fence = _open_fence_at_end(text, _body_start(text))
    if fence:
        text += fence + eol
    if text[_body_start(text) :].strip() and not text.endswith(("\n\n", "\n\r\n")):
        text += eol
    return text + line, len(text), len(text) + len(line)


def _checked(before: str, after: str) -> str:
    """``after``, unless inserted lines closed a frontmatter block ``before`` left open."""
    if split_frontmatter(before)[0] is None and split_frontmatter(after)[0] is not None:
        raise usage_error(
            "cannot add a '---' or '...' line to this note: its frontmatter opens with '---' "
            "but never closes, and that line would close it; add the closing '---' line "
            "after the frontmatter first"
        )
    return after


def ensure_heading(text: str, heading: str, level: int = 2) -> str:
    """Return ``text`` with a section ``heading``, appended at the end when missing.

    ``heading`` may carry its own ``#``s, which override ``level``. The new heading is
    separated by one blank line and written in the file's line ending; a code fence left
    open at the end of the note is closed first (an open fence runs to the end, so the
    heading would otherwise be code). Raises ``usage_error`` for an empty heading or a
    level outside 1-6.
    """
    return _ensure(text, heading, level)[0]


def replace_section_body(text: str, heading: str, body: str) -> str:
    """Replace the content of section ``heading`` (heading line kept) with ``body``,
    followed by one blank line before the next heading; the section is appended when
    missing (see ``ensure_heading``). New lines take the heading line's ending; leading and trailing
    empty lines of ``body`` are dropped, and a fence ``body`` leaves open is closed. A
    heading inside ``body`` stays a heading. Raises ``usage_error`` for an empty heading,
    or when ``body`` has a ``---`` line that would close a frontmatter block left open.
    """
    original = text
    text, start, end = _ensure(text, heading, 2)
    tail = text[end:]
    heading_end = text.find("\n", start)
    if heading_end < 0:
        text = _complete(text, line_ending(original))
        heading_end = len(text)
    else:
        heading_end += 1
    # the heading line's own ending, not the file's majority: removing the old content
    # can change the majority, and a second identical call must write the same bytes
    eol = "\r\n" if text.endswith("\r\n", 0, heading_end) else "\n"
    content = _physical([body]) if body.strip() else []
    while content and not content[-1]:
        content.pop()
    while content and not content[0]:
        content.pop(0)
    block = (eol + eol.join(_closed(content)) + eol) if content else ""
    if tail:
        block += eol
    return _checked(original, text[:heading_end] + block + tail)


def append_under_heading(text: str, heading: str, lines: list[str], *,
                         once: bool = True) -> tuple[str, bool]:
    """Insert ``lines`` at the end of section ``heading``; return ``(text, changed)``.

    The lines go after the last non-blank line of the section's own content (before the
    next heading of any level), creating the heading at the end when missing (see
    ``ensure_heading``). Lines may contain ``\n``; they are written in the file's line
    ending. A fence open at the insertion point (one that ran to the end of the note) is
    closed before them, and a fence the lines leave open is closed after them, so they
    never swallow the headings that follow. Idempotent: when the first line is already
    present (ignoring trailing spaces) anywhere in the section, or already stands at the
    insertion point (a heading line that ended the section), ``text`` is returned
    unchanged with ``False``. ``once=False`` drops that check (an event log, where a
    repeated line is a repeated event). Raises ``usage_error`` for an empty heading, or
    when the lines have a ``---`` line that would close a frontmatter block left open.
    """
    physical = _physical(lines)
    if not physical:
        return text, False
    original = text
    eol = line_ending(text)
    text, start, end = _ensure(text, heading, 2)
    first = physical[0].rstrip()
    insert_at, open_fence, own_content = start, "", True
    for line in _scan(text[:end], start):
        if line.start != start:
            if once and line.content.rstrip() == first:
                return original, False
            if (not line.in_code and not line.in_comment
                    and _heading_of(line.content) is not None):
                own_content = False
            if not own_content or not line.content.strip():
                continue
        insert_at, open_fence = line.end, line.open_fence
    following = next(_scan(text, insert_at, open_fence), None)
    if once and following is not None and following.content.rstrip() == first:
        return original, False
    block = eol.join(([open_fence] if open_fence else []) + _closed(physical))
    head = text[:insert_at]
    if head.endswith("\n"):
        return _checked(original, head + block + eol + text[insert_at:]), True
    # at the end of a note without a final line break: keep that style, unless the last
    # line appended is empty (it would not be a line at all without its ending)
    ending = eol if not physical[-1] else ""
    return _checked(original, _complete(head, eol) + block + ending + text[insert_at:]), True


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
        chunks = (_INLINE_CODE_RE.sub("", line.content) for line in _scan(text, 0)
                  if not line.in_code and "[[" in line.content)
    for chunk in chunks:
        for inner in _WIKILINK_RE.findall(chunk):
            if "|" in inner or "#" in inner:
                inner = _TARGET_END_RE.split(inner, maxsplit=1)[0]
            target = inner.rstrip("\\").strip()
            if target:
                seen[target] = None  # a key seen before keeps its first place
    return list(seen)
