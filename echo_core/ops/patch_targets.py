"""Where a ``patch`` lands in a note's text: a heading's section, a block reference, a
frontmatter field (SPEC §6.2 ``patch_note``; seed S0 ``cmd_patch``).

Pure functions on note text; no I/O. Each ``patch_*`` returns the new text (the same
string when the edit would change nothing). Every byte outside the target stays as it
was; new lines take the line ending of the line they follow (else the file's).

* heading: ``"Log"`` (any level), ``"## Log"`` (that level) or a nested path
  ``"Log::2026"`` (a heading inside the one before it). The target is the section's
  content: from the end of the heading line to the next heading of the same or a higher
  level (nested headings included). ``append`` inserts after its last non-blank line,
  ``prepend`` before its first non-blank line, ``replace`` swaps the content.
* block: ``^id`` at the end of a line: the list item carrying it, or the paragraph it
  ends; alone on a line: the block before it (a whole list or table, as Obsidian). ``append`` / ``prepend`` add
  the content as the next / previous list item or paragraph; ``replace`` swaps the
  block's text and keeps the ``^id`` on its last line.
* field: one frontmatter key, edited through ``set_frontmatter_key`` (one line). The
  content is read as the value would be typed after ``key:`` (YAML: ``on-hold``,
  ``2026-03-05`` (a date), ``[a, b]``; text that is not one YAML value stays text, and
  so does text YAML would cut at a `` #`` comment: ``Meeting #3`` is kept whole). ``replace``
  sets the key; ``append`` / ``prepend`` add the item(s) at the end / start of a list
  (an absent key becomes a one-item list; items already there are not added again).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Iterator
from typing import Any, Literal

import attrs

from echo_core.errors import not_found, usage_error
from echo_core.frontmatter import (
    line_ending,
    parse_frontmatter,
    render_value,
    set_frontmatter_key,
    split_frontmatter,
)
from echo_core.notes import find_section, headings

PatchOperation = Literal["append", "prepend", "replace"]
TargetType = Literal["heading", "field", "block"]

#: The separator of a nested heading path (``Log::2026``), as Obsidian's REST API.
HEADING_PATH_SEPARATOR = "::"
_ISO_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_BLOCK_ID_RE = re.compile(r"[A-Za-z0-9_-]+")
_BLOCK_MARK_RE = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9_-]+)[ \t]*$")
_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_HEADING_RE = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_LIST_ITEM_RE = re.compile(r"[ \t]*(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]|$)")


def content_lines(content: str) -> list[str]:
    """``content`` as physical lines without endings, leading and trailing blank lines
    dropped. Errors: 2 (naming ``content``) when nothing is left, or when the lines leave
    a code fence open (it would swallow the rest of the note)."""
    lines = [part.rstrip("\r") for part in content.split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        raise usage_error("content: it is empty; give the text to add (e.g. '- 2026-03-01: "
                          "shipped it')")
    if _fence_after(lines, ""):
        raise usage_error("content: it opens a ``` code fence that it never closes (the fence "
                          "would swallow the rest of the note); add the closing fence line")
    return lines


def _fence_after(lines: list[str], fence: str) -> str:
    """The fence still open after ``lines`` when ``fence`` was open before them."""
    for line in lines:
        fence = _fence_step(line, fence)
    return fence


def _fence_step(content: str, fence: str) -> str:
    """The fence open after the line ``content`` (``""``: none), as CommonMark."""
    match = _FENCE_RE.fullmatch(content)
    if not fence:
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            return match.group(1)
        return ""
    if (match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
            and not match.group(2).strip()):
        return ""
    return fence


def _lines_from(text: str, start: int) -> Iterator[tuple[int, int, str]]:
    """``(start, end, content)`` of each line of ``text`` from offset ``start``; ``end``
    is past the line ending, ``content`` has none."""
    pos = start
    while pos < len(text):
        newline = text.find("\n", pos)
        end = len(text) if newline < 0 else newline + 1
        yield pos, end, text[pos:end].rstrip("\n").rstrip("\r")
        pos = end


def _eol_of(text: str, line_end: int) -> str:
    """The ending of the line ending at ``line_end`` (the file's when it has none)."""
    if text.endswith("\r\n", 0, line_end):
        return "\r\n"
    if text.endswith("\n", 0, line_end):
        return "\n"
    return line_ending(text)


def _body_start(text: str) -> int:
    return len(text) - len(split_frontmatter(text)[1])


# ---------------------------------------------------------------- heading


def heading_span(text: str, target: str) -> tuple[int, int] | None:
    """``(content_start, end)`` of the section ``target`` names (see the module
    docstring), None when there is no such heading. Errors: 2 for an empty path part."""
    parts = [part.strip() for part in target.split(HEADING_PATH_SEPARATOR)]
    if not all(parts):
        raise usage_error(f"target: heading {target!r} has an empty part; write e.g. "
                          "'Log' or 'Log::2026'")
    span = find_section(text, parts[0])
    for part in parts[1:]:
        if span is None:
            return None
        inner = _line_end(text, span[0])
        # a leading line break: the section's text is never read as a frontmatter block
        found = find_section("\n" + text[inner:span[1]], part)
        span = None if found is None else (inner + found[0] - 1, inner + found[1] - 1)
    if span is None:
        return None
    return _line_end(text, span[0]), span[1]


def _line_end(text: str, start: int) -> int:
    newline = text.find("\n", start)
    return len(text) if newline < 0 else newline + 1


def missing_heading(path: str, text: str, target: str) -> Exception:
    """The not-found error (44) for a heading ``target`` absent from the note at ``path``,
    listing the note's real headings."""
    real = ", ".join(repr(h) for h in headings(text)) or "(none)"
    return not_found(f"{path} has no heading {target!r}; its headings: {real} (nest with "
                     f"'{HEADING_PATH_SEPARATOR}', e.g. 'Log{HEADING_PATH_SEPARATOR}2026')")


def _same(lines: list[tuple[int, int, str]], new: list[str]) -> bool:
    return [content.rstrip() for _, _, content in lines] == [n.rstrip() for n in new]


def _heading_at(text: str, pos: int) -> bool:
    return pos < len(text) and _HEADING_RE.match(text, pos) is not None


def patch_heading(text: str, span: tuple[int, int], operation: PatchOperation,
                  new: list[str]) -> str:
    """``text`` with ``new`` (``content_lines``) put into the section content ``span``
    (from ``heading_span``) by ``operation``. Appending lines that already end the
    section, or prepending lines that already open it, changes nothing."""
    start, end = span
    eol = _eol_of(text, start)
    lines = list(_lines_from(text[:end], start))
    filled = [line for line in lines if line[2].strip()]
    block = eol.join(new) + eol
    if operation == "replace":
        if start == len(text) and not text.endswith("\n"):
            return text + eol + eol.join(new)
        # as ``notes.replace_section_body``: a blank line after the heading and before
        # the next one
        tail = eol if end < len(text) else ""
        return text[:start] + eol + block + tail + text[end:]
    if not filled:  # an empty section: right under the heading line
        if start == len(text) and not text.endswith("\n"):
            return text + eol + eol.join(new)
        gap = eol if end < len(text) and start == end else ""
        return text[:start] + block + gap + text[start:]
    if operation == "append":
        last = filled[-1]
        run = [line for line in lines if line[0] <= last[0]][-len(new):]
        if _same(run, new):
            return text
        if last[1] == len(text) and not text.endswith("\n"):
            return text + _eol_of(text, last[0]) + eol.join(new)
        return text[:last[1]] + block + text[last[1]:]
    first = filled[0]
    if _same([line for line in lines if line[0] >= first[0]][:len(new)], new):
        return text
    gap = eol if _heading_at(text, first[0]) else ""
    return text[:first[0]] + block + gap + text[first[0]:]


# ---------------------------------------------------------------- block


def block_id(target: str) -> str:
    """The bare id of a block target (``^abc`` or ``abc``). Errors: 2 when it is not
    letters, digits, ``-`` and ``_``."""
    bare = target.strip().removeprefix("^")
    if not _BLOCK_ID_RE.fullmatch(bare):
        raise usage_error(f"target: {target!r} is not a block id; give the id at the end "
                          "of the line, e.g. '^decision-1' (letters, digits, - and _)")
    return bare


def _body_lines(text: str) -> list[tuple[int, int, str]]:
    """The body's lines outside fenced code."""
    found: list[tuple[int, int, str]] = []
    fence = ""
    for line in _lines_from(text, _body_start(text)):
        after = _fence_step(line[2], fence)
        if not fence and not after:
            found.append(line)
        fence = after
    return found


def block_ids(text: str) -> list[str]:
    """The block ids the body's lines end with, in order, without duplicates."""
    ids = (_BLOCK_MARK_RE.search(content) for _, _, content in _body_lines(text))
    return list(dict.fromkeys(match.group(1) for match in ids if match))


@attrs.frozen
class _Block:
    """A block in a note: ``[start, content_end)`` is its text, ``end`` the end of the
    line carrying the id; ``item``: a list item; ``alone``: the id is on its own line
    (after the text, maybe past blank lines)."""

    start: int
    content_end: int
    end: int
    item: bool
    alone: bool


def _paragraph_start(lines: list[tuple[int, int, str]], last: int) -> int:
    """The index of the first line of the paragraph whose last line is ``last``."""
    first = last
    while first > 0:
        before = lines[first - 1]
        if (not before[2].strip() or before[1] != lines[first][0]
                or _HEADING_RE.match(before[2])):
            break
        first -= 1
    return first


def _block(text: str, wanted: str) -> _Block | None:
    """The block ``^wanted`` names, None when no line outside code carries it."""
    lines = _body_lines(text)
    for i, (start, end, content) in enumerate(lines):
        match = _BLOCK_MARK_RE.search(content)
        if not match or match.group(1) != wanted:
            continue
        if content[:match.start()].strip():
            if _LIST_ITEM_RE.match(content):
                return _Block(start, end, end, True, False)
            return _Block(lines[_paragraph_start(lines, i)][0], end, end, False, False)
        last = i  # an id on its own line names the block before it (a list, a table)
        while last > 0 and not lines[last - 1][2].strip() and lines[last - 1][1] == lines[last][0]:
            last -= 1
        if last == 0 or lines[last - 1][1] != lines[last][0] or _HEADING_RE.match(
                lines[last - 1][2]) or not lines[last - 1][2].strip():
            return _Block(start, start, end, False, True)
        return _Block(lines[_paragraph_start(lines, last - 1)][0], lines[last - 1][1], end,
                      False, True)
    return None


def missing_block(path: str, text: str, wanted: str) -> Exception:
    """The not-found error (44) for a block id absent from the note, listing its ids."""
    real = ", ".join("^" + b for b in block_ids(text)) or "(none)"
    return not_found(f"{path} has no block ^{wanted}; its block ids: {real}")


def patch_block(path: str, text: str, target: str, operation: PatchOperation,
                new: list[str]) -> str:
    """``text`` with ``new`` put at the block ``target`` by ``operation`` (module
    docstring). Errors: 2 for a malformed id; 44 listing the note's block ids."""
    wanted = block_id(target)
    block = _block(text, wanted)
    if block is None:
        raise missing_block(path, text, wanted)
    eol = _eol_of(text, block.start)
    if operation == "replace" and block.alone:
        return text[:block.start] + eol.join(new) + eol + text[block.content_end:]
    if operation == "replace":
        mark = f"^{wanted}"
        body = new if _BLOCK_MARK_RE.search(new[-1]) else [
            *new[:-1], f"{new[-1].rstrip()} {mark}"]
        tail = eol if text.endswith("\n", 0, block.end) else ""
        return text[:block.start] + eol.join(body) + tail + text[block.end:]
    gap = [] if block.item or block.alone else [""]
    if operation == "append":
        at = block.content_end
        if block.alone:  # the new lines end the block: are they its last lines already?
            done = list(_lines_from(text[:at], block.start))[-len(new):]
        else:  # the new lines follow the block: are they there already?
            done = list(_lines_from(text, at))[:len(gap) + len(new)]
        if _same(done, new if block.alone else gap + new):
            return text
        if not text.endswith("\n", 0, at):
            return text[:at] + eol + eol.join(gap + new) + text[at:]
        return text[:at] + eol.join(gap + new) + eol + text[at:]
    before = list(_lines_from(text[:block.start], 0))[-(len(gap) + len(new)):]
    if _same(before, new + gap):
        return text
    return text[:block.start] + eol.join(new + gap) + eol + text[block.start:]


# ---------------------------------------------------------------- field


def _yaml_value(content: str) -> Any:
    """``content`` read as YAML after ``v:``; None when it is no value or not YAML."""
    value, _, error = parse_frontmatter(f"---\nv: {content}\n---\n")
    return None if error is not None else value.get("v")


def field_value(content: str) -> Any:
    """The value ``content`` stands for, read as it would be after ``key:`` in the
    frontmatter; text that is not one YAML value (or is empty) stays the text, and so does
    text YAML would cut at a comment (``Meeting #3 notes``, ``[a] # why``): it is kept
    whole, never shortened."""
    value = _yaml_value(content)
    if value is None:
        return content
    # a trailing comment is the one thing that reads the same with more text after it
    if "#" in content and _yaml_value(content + "x") == value:
        return content
    return _dated(value)


def _dated(value: Any) -> Any:
    """An ISO date string as a date (written unquoted, as capture writes ``updated``)."""
    if isinstance(value, list):
        return [_dated(item) for item in value]
    if isinstance(value, str) and _ISO_DATE_RE.fullmatch(value):
        try:
            return _dt.date.fromisoformat(value)
        except ValueError:
            return value
    return value


def patch_field(text: str, key: str, operation: PatchOperation, content: str) -> str:
    """``text`` with frontmatter ``key`` set (replace) or the item(s) added to its list
    (append / prepend); only that key's line changes. Errors: 2 for a multi-line content,
    an unreadable frontmatter block, a non-list field with append / prepend, or a key
    the frontmatter helpers refuse."""
    if "\n" in content or "\r" in content:
        raise usage_error("content: a frontmatter value is one line; it contains a line "
                          "break")
    if not content.strip():
        raise usage_error("content: it is empty; give the value (e.g. 'on-hold')")
    value = field_value(content.strip())
    if operation == "replace":
        return set_field(text, key, value)
    require_mapping(text, key)
    current, _, error = parse_frontmatter(text)
    if error is not None:
        raise usage_error(f"cannot {operation} to {key!r}: the frontmatter is not readable "
                          f"({error}); fix the block first")
    old = current.get(key)
    if old is not None and not isinstance(old, list):
        raise usage_error(f"target: field {key!r} holds one value ({old!r}), not a list; "
                          "use operation replace to change it")
    items = list(old or [])
    added = [v for v in (value if isinstance(value, list) else [value]) if v not in items]
    if not added:
        return text
    return set_field(text, key, items + added if operation == "append" else added + items)


#: How ``yaml_bounded.load_block`` says a block is YAML but not ``key: value`` lines.
_NOT_A_MAPPING = "not a mapping"
_COMMENT_MARK_RE = re.compile(r"[ \t]#")


def require_mapping(text: str, key: str) -> None:
    """Raise ``usage_error`` (2) when the note's frontmatter block is YAML but not a
    mapping (a list, a lone text): a ``key: value`` line added to it would make the whole
    block unreadable."""
    error = parse_frontmatter(text)[2]
    if error is not None and _NOT_A_MAPPING in error:
        raise usage_error(f"cannot set {key!r}: the note's {error} (a line added now would "
                          "leave the block unreadable). Nothing was written")


def set_field(text: str, key: str, value: Any) -> str:
    """``text`` with frontmatter ``key`` set to ``value`` (``set_frontmatter_key``),
    keeping what the key's one line holds besides the value: a trailing ``# comment``,
    and for a flow list grown at one end (``[a, "b"]`` plus ``c``) the items already
    there as they are spelled. Errors: those of ``set_frontmatter_key``; 2 when the block
    is not a mapping (``require_mapping``)."""
    require_mapping(text, key)
    kept = _kept_line(text, key, value)
    return kept if kept is not None else set_frontmatter_key(text, key, value)


def _plain(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def _read_value(typed: str) -> list[Any]:
    """``[value]``: ``typed`` read as the value after ``v:`` (JSON-ready); ``[]`` when
    it is not one value."""
    data, _, error = parse_frontmatter(f"---\nv:{typed}\n---\n")
    return [data["v"]] if error is None and "v" in data else []


def _kept_line(text: str, key: str, value: Any) -> str | None:
    """The edit of ``set_field`` when ``key`` is on one line with its whole value and
    there is something on it to keep; None to leave the edit to ``set_frontmatter_key``."""
    block, _, error = split_frontmatter(text)
    current, _, load_error = parse_frontmatter(text)
    start = text.find("\n") + 1  # past the opening '---' line
    if (block is None or error or load_error or key not in current
            or text[start:start + len(block)] != block):
        return None
    lines = block.splitlines(keepends=True)
    head = re.compile(rf"{re.escape(key)}[ \t]*:(?=[ \t]|\r?\n|\Z)")
    at = [n for n, line in enumerate(lines) if head.match(line)]
    if len(at) != 1 or lines[at[0] + 1:at[0] + 2] and lines[at[0] + 1][:1] in " \t-":
        return None
    line = lines[at[0]]
    prefix = line[:line.index(":") + 1]
    eol = line[len(line.rstrip("\r\n")):]
    inline = line[len(prefix):len(line) - len(eol)]
    cuts = [m.start() for m in _COMMENT_MARK_RE.finditer(inline)] + [len(inline)]
    old = _plain([current[key]])
    cut = next((c for c in cuts if inline[:c].strip() and _plain(_read_value(inline[:c])) == old),
               None)
    read = _read_value(" " + render_value(value))
    if cut is None or not read or _plain(read) == old:
        return None  # unusual, or unchanged: as set_frontmatter_key does
    wanted, typed, comment = read[0], inline[:cut], inline[cut:]
    grown = _grown_flow(typed, current[key], wanted, value)
    if not comment and grown is None:
        return None  # nothing to keep: set_frontmatter_key writes the same line
    lead = typed[:len(typed) - len(typed.lstrip())] or " "
    lines[at[0]] = f"{prefix}{grown or lead + render_value(value)}{comment}{eol}"
    result = text[:start] + "".join(lines) + text[start + len(block):]
    after, _, after_error = parse_frontmatter(result)
    same = after_error is None and _plain(after) == _plain({**current, key: wanted})
    return result if same else None


def _grown_flow(typed: str, old: Any, new: Any, value: Any) -> str | None:
    """``typed`` (a flow list ``[a, "b"]`` holding ``old``) with the items ``new`` (read
    from ``value``) adds at its end or start written in, every other character kept;
    None when ``new`` is not ``old`` grown at one end or ``typed`` is not one ``[...]``."""
    core = typed.strip()
    if not (isinstance(old, list) and isinstance(new, list) and len(new) > len(old)
            and core[:1] == "[" and core[-1:] == "]"):
        return None
    size, at_end = len(old), _plain(new[:len(old)]) == _plain(old)
    if not at_end and _plain(new[len(new) - size:]) != _plain(old):
        return None
    items = ", ".join(map(render_value, value[size:] if at_end else value[:len(new) - size]))
    inner = core[1:-1]
    if not inner.strip():
        inner = items
    elif at_end:
        inner = f"{inner.rstrip()}, {items}{inner[len(inner.rstrip()):]}"
    else:
        inner = f"{inner[:len(inner) - len(inner.lstrip())]}{items}, {inner.lstrip()}"
    return f"{typed[:len(typed) - len(typed.lstrip())]}[{inner}]{typed[len(typed.rstrip()):]}"
