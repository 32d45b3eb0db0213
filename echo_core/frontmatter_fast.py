"""The fast path of frontmatter parsing: flat blocks read without PyYAML.

Notes' frontmatter is nearly always flat: simple keys, plain words, dates, small ints,
double-quoted strings without escapes, flow lists of such. Those are read here (PyYAML's constructor costs ~25 us a block);
anything else — other quoted forms, comments, nesting, continuation lines, ':' or '#' in a value,
other numbers, CR — returns None and goes to PyYAML, so results are always PyYAML's
(property-tested in tests/test_frontmatter_fast.py). What it accepts is flat, alias-free
and never beyond the bounds of ``echo_core.yaml_bounded`` (the caller checks the size
first). Every pattern here is linear in the line's length.
"""

from __future__ import annotations

import re
from typing import Any

from echo_core.lazy_pattern import LazyPattern

# Characters the YAML reader rejects or treats as line breaks; always escaped when quoting
# (compiled on first use: ASCII text never needs it, ``str.isprintable`` decides).
YAML_UNSAFE_RE = LazyPattern(
    "[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)


def yaml_safe(text: str) -> bool:
    """Whether ``text`` holds no character ``YAML_UNSAFE_RE`` matches (ASCII text is
    judged by ``str.isprintable``: the pattern is compiled only for other text)."""
    if text.isascii():
        return text.isprintable()
    return YAML_UNSAFE_RE.search(text) is None

#: A ``key: value`` line anywhere in a block; the value keeps its trailing spaces, which
#: are stripped after (no lazy group before ``" *$"``: it backtracked quadratically on
#: a long run of inner spaces).
_BLOCK_LINE_RE = LazyPattern(r"^([A-Za-z0-9_][A-Za-z0-9_-]*):(?: +(.*))?$", re.MULTILINE)
#: A plain scalar read as a string: a letter first, then no indicator that could matter
#: anywhere ('#', ':', flow brackets, ',', quotes, '&*!|>%@`' and tabs left to PyYAML).
_FAST_WORDS_RE = LazyPattern(r"[A-Za-z][^:#\[\]{},\t\"'&*!|>%@`]*")
_FAST_DATE_RE = LazyPattern(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # a string (no timestamp resolver)
_FAST_INT_RE = LazyPattern(r"0|[1-9][0-9]{0,17}")
_FAST_SPECIAL: dict[str, Any] = {
    **dict.fromkeys(("~", "null", "Null", "NULL"), None),
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
}
_NO_FAST = object()


#: Values already read, by their text: a vault's frontmatter repeats the same few
#: (kinds, statuses, dates, tags) in every note. Bounded; every value in it is immutable.
_KNOWN: dict[str, Any] = {}
_KNOWN_MAX = 1 << 16
#: Only values this short are remembered: the memo stays under ~10 MB whatever a vault
#: holds (the repeated values are short; a long one is a title or a summary, read once).
_KNOWN_LONGEST = 80


def _fast_scalar(text: str) -> Any:
    """The value of a plain scalar when certain, else ``_NO_FAST`` (memoised)."""
    value = _KNOWN.get(text, _KNOWN)
    if value is _KNOWN:
        value = _read_scalar(text)
        if len(text) <= _KNOWN_LONGEST and len(_KNOWN) < _KNOWN_MAX:
            _KNOWN[text] = value
    return value


def _read_scalar(text: str) -> Any:
    """``_fast_scalar`` without the memo."""
    special = _FAST_SPECIAL.get(text, _NO_FAST)
    if special is not _NO_FAST:
        return special
    if _FAST_WORDS_RE.fullmatch(text):
        safe = yaml_safe(text)
        return text if safe else _NO_FAST
    if _FAST_DATE_RE.fullmatch(text):
        return text
    if _FAST_INT_RE.fullmatch(text):
        return int(text)
    if len(text) >= 2 and text[0] == text[-1] == '"':  # "2026-03-01": what we write
        inner = text[1:-1]
        if '"' not in inner and "\\" not in inner and yaml_safe(inner):
            return inner  # no escape, no quote, no break: the characters as they are
    return _NO_FAST


def fast_load(block: str) -> dict[str, Any] | None:
    """The mapping of a flat block, or None when PyYAML must read it. Every line is
    matched by one ``findall`` over the block: when it finds as many ``key: value``
    lines as the block has non-empty lines, each line is one of them."""
    if "\r" in block:
        return None
    pairs = _BLOCK_LINE_RE.findall(block)
    lines = block.split("\n")
    if len(pairs) != len(lines) - lines.count(""):
        return None
    out: dict[str, Any] = {}
    known = _KNOWN
    for key, raw in pairs:
        text = raw.rstrip(" ")
        if not text:
            value: Any = None
        elif text[0] == "[" and text[-1] == "]":
            inner = text[1:-1]
            if not inner.strip(" "):
                value = []
            else:
                value = [_fast_scalar(item.strip(" ")) for item in inner.split(",")]
                if _NO_FAST in value:
                    return None
        else:
            value = known.get(text, known)
            if value is known:
                value = _fast_scalar(text)
            if value is _NO_FAST:
                return None
        out[key] = value
    return out
