"""Text that reaches a terminal or a log line never carries raw control characters (ESC,
BEL, other C0/C1 controls, bidi overrides, lone surrogates): ``terminal_safe`` shows them
as escapes, ``json_text`` keeps JSON valid and escaped. Shared by every transport."""

from __future__ import annotations

import json
import re
from typing import Any

from echo_core.lazy_pattern import LazyPattern

# Characters that drive or disguise a terminal: C0 controls but tab and newline (a CR
# only when it does not end a CRLF line), DEL, C1 controls, the bidi controls, and lone
# surrogates (undecodable input; they cannot even be encoded for output).
_UNSAFE_PROSE = LazyPattern(
    "[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
    "\u2066-\u2069\ud800-\udfff]|\r(?!\n)"
)
# One log line: the same, plus every line break and tab (a client-chosen request path
# must not start a line of its own in a log).
_UNSAFE_LINE = LazyPattern(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
    "\u2066-\u2069\ud800-\udfff]"
)
# In JSON, json.dumps already escapes C0; these remain raw with ensure_ascii=False.
_UNSAFE_JSON = LazyPattern("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                            "\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def terminal_safe(text: str, *, one_line: bool = False) -> str:
    """``text`` with every terminal control character shown as an escape (``\\x1b``,
    ``\\u202e``); tabs, newlines and CRLF line ends are kept unless ``one_line`` (for a
    log line: they are escaped too). Other text is unchanged."""
    unsafe = _UNSAFE_LINE if one_line else _UNSAFE_PROSE
    if unsafe.search(text) is None:
        return text
    return unsafe.sub(_escape, text)


def json_text(payload: Any) -> str:
    """``payload`` as indented JSON whose every control character is a ``\\u`` escape
    (valid JSON that decodes to the same strings)."""
    text = _indented_json(payload)
    if _UNSAFE_JSON.search(text) is None:
        return text
    return _UNSAFE_JSON.sub(_json_escape, text)


#: Payloads with fewer values than this are written by the standard library: importing
#: orjson (~2-4 ms cold, with dataclasses) costs more than it saves on them.
ORJSON_FROM_VALUES = 2000


def _values_at_least(payload: Any, count: int) -> bool:
    """True when ``payload`` holds at least ``count`` values (counted until then)."""
    stack, seen = [payload], 0
    while stack:
        value = stack.pop()
        seen += 1
        if seen >= count:
            return True
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return False


def _indented_json(payload: Any) -> str:
    """``json.dumps(payload, indent=2, ensure_ascii=False)``, written by orjson when it
    can and the payload is big (the same text, 20x faster: the standard encoder falls
    back to pure Python when indenting, seconds for a 100k-note lint report); the
    standard library otherwise (a small payload, or a value orjson refuses, such as an
    integer past 64 bits or a lone surrogate)."""
    if not _values_at_least(payload, ORJSON_FROM_VALUES):
        return json.dumps(payload, indent=2, ensure_ascii=False)
    import orjson  # only big JSON pays its import

    try:
        return orjson.dumps(payload, option=orjson.OPT_INDENT_2
                            | orjson.OPT_NON_STR_KEYS).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(payload, indent=2, ensure_ascii=False)
