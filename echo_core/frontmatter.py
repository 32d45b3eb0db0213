"""YAML frontmatter of a markdown note: parse it, and edit it surgically (SPEC §1.3).

Pure functions on note text; no I/O. The block is the YAML between a first line ``---``
and the next ``---`` (or ``...``) line; a UTF-8 BOM and CRLF line endings are tolerated.
Reading never fails on a bad or hostile block (the error is returned as data; YAML is
loaded within the bounds of ``echo_core.yaml_bounded``). Editing one key touches only
that key's line(s), and adding items to a block list only inserts their ``- item``
lines: every other byte - key order, comments, quoting, blank lines, CRLF/LF, the
trailing newline - is kept. PyYAML is imported lazily.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from echo_core.errors import EchoError, usage_error
from echo_core.frontmatter_fast import YAML_UNSAFE_RE as _YAML_UNSAFE_RE
from echo_core.frontmatter_fast import fast_load as _fast_load
from echo_core.frontmatter_fast import yaml_safe
from echo_core.lazy_pattern import LazyPattern
from echo_core.yaml_bounded import MAX_DEPTH, load_block, size_refusal

BOM = "\ufeff"
_OPEN_RE = LazyPattern(r"---[ \t]*(?:\r?\n|\r?\Z)")  # the first line, ended or not
_CLOSE_RE = LazyPattern(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
_LINE_RE = LazyPattern(r"[^\n]*\n|[^\n]+\Z")
_STR_TAG = "tag:yaml.org,2002:str"
_PLAIN_FIRST_BAD = set("-?:,[]{}#&*!|>'\"%@`")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}


def line_ending(text: str) -> str:
    """``"\\r\\n"`` when CRLF line endings outnumber bare LF ones in ``text``, else ``"\\n"``."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


def _lines(text: str) -> list[str]:
    """Split on ``\\n`` only, keeping the line endings (``str.splitlines`` splits on more)."""
    return _LINE_RE.findall(text)


def _locate(text: str) -> tuple[int, int, int] | None:
    """Offsets (block start, block end, body start) in BOM-less ``text``; None if no block.

    Raises ``ValueError`` when the opening ``---`` line has no closing line.
    """
    opener = _OPEN_RE.match(text)
    if opener is None:
        return None
    closer = _CLOSE_RE.search(text, opener.end())
    if closer is None:
        raise ValueError("unclosed")
    body = closer.end() + 1 if text.startswith("\n", closer.end()) else closer.end()
    return opener.end(), closer.start(), body


def split_frontmatter(text: str) -> tuple[str | None, str, str | None]:
    """Split ``text`` into (block text or None, body, error or None). Never raises.

    The block text is the raw YAML between the delimiter lines; the body is everything
    after the closing line (never a leading BOM). No block gives ``(None, text, None)``;
    an opening ``---`` without a closing line gives ``(None, text, message)``.
    """
    rest = text[1:] if text.startswith(BOM) else text
    try:
        span = _locate(rest)
    except ValueError:
        return (
            None,
            rest,
            (
                "frontmatter opens with '---' but has no closing '---' line; "
                "add one after the last key"
            ),
        )
    if span is None:
        return None, rest, None
    start, end, body = span
    return rest[start:end], rest[body:], None


def _load(block: str) -> tuple[dict[str, Any], str | None]:
    """Load a block: (mapping, None) or ({}, error message). The size bound comes first,
    so the fast path never reads a block the bounded loader would refuse."""
    refused = size_refusal(block)
    if refused is not None:
        return {}, refused
    fast = _fast_load(block)
    if fast is not None:
        return fast, None
    return load_block(block)


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str, str | None]:
    """Parse ``text`` into (frontmatter mapping in file order, body, error or None).

    Values are JSON-ready: dates and timestamps stay strings (``'2026-01-02'``), keys are
    their literal text. A missing block gives ``({}, text, None)``; a malformed block, one
    that is not a mapping, or one refused by a bound of ``echo_core.yaml_bounded`` (size,
    depth, alias expansion, an alias cycle) gives ``({}, body, message)`` so the note stays
    readable; the message names what was refused and the limit. Never raises.
    """
    block, body, error = split_frontmatter(text)
    if block is None:
        return {}, body, error
    data, error = _load(block)
    return data, body, error


def _check_key(key: str) -> None:
    """Raise ``usage_error`` unless ``key`` can be written as a plain ``key:`` line."""
    if (
        not isinstance(key, str)
        or not key
        or key != key.strip()
        or not key.isprintable()
        or ":" in key
        or " #" in key
        or key[0] in _PLAIN_FIRST_BAD
        or key == "<<"
    ):
        raise usage_error(
            f"frontmatter key {key!r} is not a simple key; use letters, digits, '_', '-' "
            "or spaces, without ':' and not starting with '#', '-' or a quote ('<<' is "
            "YAML's merge key)"
        )


@functools.lru_cache(maxsize=1)
def _std_resolver() -> Any:
    from yaml.resolver import Resolver

    return Resolver()


#: Words of letters, digits, ``_`` and ``-`` that start with a letter, single spaces
#: between: YAML 1.1 resolves such a plain scalar to a string unless it is one of the
#: bool or null spellings below (every int, float, timestamp, merge and value form starts
#: with a digit, a sign, a dot, ``<`` or ``=``). Known without importing yaml, which
#: costs a one-shot capture ~10 ms; ``_plain_ok`` asks the resolver for anything else.
_WORDS_RE = LazyPattern(r"[A-Za-z][A-Za-z0-9_-]*(?: [A-Za-z0-9_-]+)*")
_YAML11_WORDS = frozenset(
    f(word) for word in ("yes", "no", "true", "false", "on", "off", "null")
    for f in (str.lower, str.capitalize, str.upper))


def _plain_ok(text: str, flow: bool = True) -> bool:
    """Whether ``text`` can be written unquoted and read back as the same string by any
    YAML 1.1 loader (so ``'yes'``, ``'2026-01-01'``, ``'12'`` and ``'null'`` are not);
    ``flow=False``: as a block-list item, where ``,[]{}`` after the first character are
    plain text."""
    if not text or text != text.strip() or not text.isprintable():
        return False
    if text[0] in _PLAIN_FIRST_BAD or (flow and any(c in text for c in ",[]{}")):
        return False
    if ": " in text or text.endswith(":") or " #" in text or not yaml_safe(text):
        return False
    if _WORDS_RE.fullmatch(text):
        return text not in _YAML11_WORDS
    import yaml

    tag = _std_resolver().resolve(yaml.ScalarNode, text, (True, False))
    return bool(tag == _STR_TAG)


def _quote(text: str) -> str:
    """A YAML double-quoted scalar for ``text`` (escapes breaks and unprintables)."""

    def escape(match: re.Match[str]) -> str:
        char = match.group(0)
        if char in _ESCAPES:
            return _ESCAPES[char]
        code = ord(char)
        if code < 0x100:
            return f"\\x{code:02x}"
        return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

    return '"' + re.sub(r'["\\]|' + _YAML_UNSAFE_RE.pattern, escape, text) + '"'


def _float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    mantissa, sep, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + sep + exponent


def _render(value: Any, quote_all: bool, depth: int = 0) -> str:
    if depth > MAX_DEPTH:
        raise usage_error(
            f"cannot store a value nested more than {MAX_DEPTH} deep in frontmatter "
            "(or one that contains itself); flatten it"
        )
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return _int(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, str):
        return value if not quote_all and _plain_ok(value) else _quote(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_render(v, quote_all, depth + 1) for v in value) + "]"
    if isinstance(value, Mapping):
        items = (
            f"{_render(_int(k) if isinstance(k, int) else str(k), quote_all)}: {_render(v, quote_all, depth + 1)}"
            for k, v in value.items()
        )
        return "{" + ", ".join(items) + "}"
    raise usage_error(
        f"cannot store a {type(value).__name__} in frontmatter; use a string, number, "
        "boolean, null, date, list or mapping"
    )


def _int(value: int) -> str:
    try:
        return str(value)
    except ValueError:  # over sys.get_int_max_str_digits()
        raise usage_error(
            "cannot store an integer this long in frontmatter; store it as a string"
        ) from None


def _plain_data(value: Any) -> Any:
    """JSON-ready form: dates as ISO strings, tuples as lists, mapping keys as strings."""
    if isinstance(value, Mapping):
        return {str(k): _plain_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_data(v) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return value


def _canon(value: Any) -> str:
    """A comparable text form of a value (distinguishes ``1``, ``1.0`` and ``true``)."""
    return json.dumps(_plain_data(value), sort_keys=True, default=repr)


def render_value(value: Any) -> str:
    """``value`` as one line of YAML flow style that reads back as the same value.

    Strings are plain when safe, else double-quoted; lists render ``[a, b]``, mappings
    ``{a: b}``; ``date``/``datetime`` objects render plain ISO (``2026-01-02``) while a
    string ``'2026-01-02'`` is quoted. Raises ``usage_error`` for other types, values
    nested more than ``MAX_DEPTH`` deep, and values that would not read back the same.
    """
    texts = [_render(value, quote_all) for quote_all in (False, True)]
    expected = _canon(value)
    for text in texts:
        data, error = _load("v: " + text)
        if error is None and _canon(data.get("v")) == expected:
            return text
    raise usage_error(
        f"cannot write this {type(value).__name__} as a one-line frontmatter value "
        "(it would not read back the same); store it as a plain string"
    )


def render_frontmatter(mapping: Mapping[str, Any]) -> str:
    """A new frontmatter block (``---`` lines, LF, one ``key: value`` per line, in order).

    Lists render in flow style (``tags: [a, b]``). Raises ``usage_error`` for a key that
    is not simple or a value that cannot be stored.
    """
    lines = ["---\n"]
    for key, value in mapping.items():
        _check_key(key)
        lines.append(f"{key}: {render_value(value)}\n")
    lines.append("---\n")
    return "".join(lines)


def _key_spans(lines: list[str], key: str) -> list[tuple[int, int]]:
    """Line ranges ``[i, j)`` of each top-level occurrence of ``key`` with its value's
    continuation lines (indented lines, and column-0 ``- item`` lines when the key has no
    value on its own line; blank and column-0 comment lines only when more continuation
    follows)."""
    k = re.escape(key)
    head = re.compile(rf"(?:{k}|\"{k}\"|'{k}')[ \t]*:(?=[ \t]|\r?\n|\Z)")
    spans: list[tuple[int, int]] = []
    for i, line in enumerate(lines):
        match = head.match(line)
        if not match:
            continue
        inline = line[match.end() :].strip()
        items_follow = not inline or inline.startswith("#")
        j = last = i + 1
        while j < len(lines):
            content = lines[j].rstrip("\r\n")
            filler = not content.strip() or content.startswith("#")
            item = content == "-" or content.startswith(("- ", "-\t"))
            if not filler and not (content[0] in " \t" or (item and items_follow)):
                break
            j += 1
            if not filler:
                last = j
        spans.append((i, last))
    return spans


#: A block-list item line: its indent, the dash and the blanks after it, then the item.
_ITEM_RE = LazyPattern(r"([ \t]*)-([ \t]+)\S")


def _list_growth(old: Any, new: Any) -> tuple[list[Any], bool] | None:
    """(items ``new`` adds, True when added at the end / False at the start) when ``new``
    is the non-empty list ``old`` with items added at one end; else None."""
    if not isinstance(old, list) or not old or not isinstance(new, (list, tuple)):
        return None
    size, have = len(old), [_canon(v) for v in old]
    if len(new) <= size:
        return None
    want = [_canon(v) for v in new]
    if want[:size] == have:
        return list(new[size:]), True
    if want[-size:] == have:
        return list(new[:-size]), False
    return None


def _item_text(value: Any) -> str:
    """``value`` as the text of a block-list item: plain when YAML reads it back the
    same, else as ``render_value`` writes it (quoted string, flow list or mapping)."""
    if isinstance(value, str) and _plain_ok(value, flow=False):
        return value
    return render_value(value)


def _opens_block(line: str) -> bool:
    """Whether the key line ``line`` leaves its value to the lines below (no inline
    value, at most a comment): the head of a block list or mapping."""
    inline = line[line.index(":") + 1 :].strip()
    return not inline or inline.startswith("#")


def _grown_block_list(lines: list[str], span: tuple[int, int], added: list[Any],
                      at_end: bool) -> list[str] | None:
    """``lines`` with ``added`` written as new ``- item`` lines of the block list whose
    key spans ``span``: after its last item (``at_end``) or before its first, in the
    indent, dash spacing and line ending of the neighbouring item; every other line kept
    as it is. None when the item lines (one per item at one indent, deeper lines being
    their continuations, comments and blanks anywhere) cannot be told apart."""
    i, j = span
    body = [n for n in range(i + 1, j)
            if lines[n].strip() and not lines[n].lstrip().startswith("#")]
    first = _ITEM_RE.match(lines[body[0]]) if body else None
    if first is None:
        return None
    indent = first.group(1)
    items = []
    for n in body:
        match = _ITEM_RE.match(lines[n])
        if match is not None and match.group(1) == indent:
            items.append((n, match))
        elif len(lines[n]) - len(lines[n].lstrip(" \t")) <= len(indent):
            return None  # neither an item nor an item's continuation
    n, anchor = items[-1] if at_end else items[0]
    eol = "\r\n" if lines[n].endswith("\r\n") else "\n"
    new = [f"{indent}-{anchor.group(2)}{_item_text(v)}{eol}" for v in added]
    at = body[-1] + 1 if at_end else n
    return lines[:at] + new + lines[at:]


def _reads_as(text: str, expected: Mapping[str, Any]) -> bool:
    """Whether ``text``'s frontmatter reads back without error as ``expected``."""
    data, _, error = parse_frontmatter(text)
    return error is None and _canon(data) == _canon(expected)


def _edit(text: str, key: str, value: Any, remove: bool) -> str:
    """Shared body of set/remove: find the block, splice lines, verify the result."""
    _check_key(key)
    rendered = "" if remove else render_value(value)
    bom = BOM if text.startswith(BOM) else ""
    rest = text[len(bom) :]
    try:
        span = _locate(rest)
    except ValueError:
        raise usage_error(
            f"cannot {'remove' if remove else 'set'} {key!r}: the frontmatter opens with "
            "'---' but has no closing '---' line; add the closing line first"
        ) from None
    eol = line_ending(text)
    if span is None:
        if remove:
            return text
        return f"{bom}---{eol}{key}: {rendered}{eol}---{eol}{rest}"
    start, end, _ = span
    head, tail = bom + rest[:start], rest[end:]
    lines = _lines(rest[start:end])
    old, old_error = _load(rest[start:end])
    spans = _key_spans(lines, key)
    if remove:
        if not spans:
            return text
        drop = {n for i, j in spans for n in range(i, j)}
        lines = [line for n, line in enumerate(lines) if n not in drop]
        expected = {k: v for k, v in old.items() if k != key}
    else:
        if old_error is None and key in old and _canon(old[key]) == _canon(value):
            return text
        if old_error is None and key in old and not spans:
            raise EchoError(
                f"cannot find the line of {key!r} in this note's frontmatter (unusual "
                "layout); edit the block by hand"
            )
        expected = {**old, key: value}
        if spans and old_error is None and _opens_block(lines[spans[-1][0]]):
            i, j = spans[-1]
            growth = _list_growth(old.get(key), value)
            grown = _grown_block_list(lines, (i, j), *growth) if growth else None
            if grown is not None and _reads_as(result := head + "".join(grown) + tail,
                                               expected):
                return result
            if growth and any("#" in line for line in lines[i:j]):
                raise EchoError(
                    f"cannot add to {key!r} without dropping the comments in its list "
                    "(unusual layout); add the items by hand"
                )
        if spans:
            i, j = spans[-1]
            prefix = lines[i][: lines[i].index(":") + 1]
            line_eol = "\r\n" if lines[i].endswith("\r\n") else "\n"
            lines[i:j] = [f"{prefix} {rendered}{line_eol}"]
        else:
            lines.append(f"{key}: {rendered}{eol}")
    result = head + "".join(lines) + tail
    if old_error is None and not _reads_as(result, expected):
        raise EchoError(
            f"cannot change {key!r} without reformatting this note's frontmatter "
            "(unusual layout); edit the block by hand"
        )
    return result


def set_frontmatter_key(text: str, key: str, value: Any) -> str:
    """Return ``text`` with frontmatter ``key`` set to ``value``, touching only its lines.

    An existing key's line and its continuation lines become one ``key: value`` line
    (the key's own spelling kept). When the key holds a block list (``key:`` then
    ``- item`` lines) and ``value`` is that list with items added at its end (or start),
    only new ``- item`` lines are inserted, after its last item (before its first), in
    the indent, dash spacing and line ending of its items, each quoted only when YAML
    needs it; the other items, their comments and quotes stay as they are. If such a
    list's item lines cannot be told apart, it becomes one flow line when it holds no
    comment, and ``EchoError`` is raised when it does (a comment is never dropped). A
    new key is one line added before the closing ``---``; no block at all prepends
    ``---/key: value/---`` in the file's line ending. Setting a key to the value it
    already has returns ``text`` unchanged. A malformed block is still edited
    line-wise, never rewritten. Raises ``usage_error`` for a key that is not simple, an
    unstorable value, or an unclosed block; ``EchoError`` (exit 1) when a valid block's
    layout (e.g. flow style) cannot be edited without reformatting.
    """
    return _edit(text, key, value, remove=False)


def remove_frontmatter_key(text: str, key: str) -> str:
    """Return ``text`` without frontmatter ``key`` (all its occurrences and continuation
    lines); unchanged when absent. Raises ``usage_error`` like ``set_frontmatter_key``."""
    return _edit(text, key, None, remove=True)
