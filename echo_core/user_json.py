"""JSON a user gave us (a file, stdin, an argument), read without a traceback.

``json.loads`` fails in three ways on hostile text, not one: ``JSONDecodeError`` (not
JSON), ``RecursionError`` (arrays or objects nested deeper than Python's stack) and
``ValueError`` (an integer with more digits than Python converts, 4,300 by default).
``parse_user_json`` turns each into the usage error (exit 2) naming the input, so every
verb that reads a user's JSON reports it like any other invalid input, before anything
is written.
"""

from __future__ import annotations

import json
import re
import sys

from echo_core.errors import usage_error


class _HugeInteger:
    """Stands in for an integer Python will not convert, so parsing can go on and the
    error can name where it is."""

    def __init__(self, digits: str) -> None:
        self.digits = digits


def _where(value: object, wanted: object) -> str:
    """The path of ``wanted`` (by identity) in the parsed ``value`` (``[0].confidence``;
    ``""`` when it is ``value`` itself or not there). Iterative: ``value`` may be nested
    as deep as the parser allows."""
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        path, node = stack.pop()
        if node is wanted:
            return path
        if isinstance(node, dict):
            stack.extend((f"{path}.{key}" if path else str(key), item)
                         for key, item in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((f"{path}[{index}]", item)
                         for index, item in reversed(list(enumerate(node))))
    return ""


def parse_user_json(text: str, what: str, hint: str = "") -> object:
    """The value of the JSON ``text``.

    ``what`` names the input in errors (``PROPOSALS``, ``bundle``); ``hint`` (e.g. "see
    `echo-memory reflect --help`") ends every message. Errors: ``EchoError`` 2 when
    ``text`` is not JSON (line and column given), is nested too deeply to read, holds
    an integer with more digits than Python converts (the field named, e.g.
    ``[0].confidence``), or gives one key twice in an object (``json`` keeps the last
    value silently: a proposal's ``title`` would be swapped). No side effects."""
    huge: list[_HugeInteger] = []
    twice: list[str] = []

    def one_each(pairs: list[tuple[str, object]]) -> dict[str, object]:
        out: dict[str, object] = {}
        for key, item in pairs:
            if key in out and not twice:
                twice.append(key)
            out[key] = item
        return out

    def as_int(digits: str) -> object:
        try:
            return int(digits)
        except ValueError:
            huge.append(_HugeInteger(digits))
            return huge[-1]

    try:
        value = json.loads(text, parse_int=as_int, object_pairs_hook=one_each)
    except json.JSONDecodeError as exc:
        problem = f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
    except RecursionError:
        problem = "arrays or objects nested too deeply to read; flatten it"
    except ValueError as exc:  # any other refusal of the decoder
        problem = str(exc)
    else:
        if twice:
            raise usage_error(f"{what}: the key {twice[0]!r} is given twice in one object (only "
                              f"one value would be read){'; ' + hint if hint else ''}")
        if not huge:
            return value
        where = _where(value, huge[0])
        problem = (f"{where + ': ' if where else ''}an integer of "
                   f"{len(huge[0].digits.lstrip('-'))} digits; at most "
                   f"{sys.get_int_max_str_digits()} are read")
    raise usage_error(f"{what}: not valid JSON ({problem}){'; ' + hint if hint else ''}")


#: A JSON escape of a surrogate (``\\ud83d``): the text may decode to a lone one.
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def with_valid_text(value: object) -> object:
    """``value`` (parsed JSON) with every lone surrogate in its strings, keys included,
    replaced by U+FFFD. JSON may hold one (the escape ``\\ud83d`` alone: half an emoji,
    cut by a client), and no note can be written with it, so one bad character would
    fail the whole write. A caller that has the raw bytes can skip the walk when
    ``SURROGATE_ESCAPE`` does not match them."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value) if _LONE_SURROGATE.search(value) else value
    if isinstance(value, list):
        return [with_valid_text(item) for item in value]
    if isinstance(value, dict):
        return {with_valid_text(key): with_valid_text(item) for key, item in value.items()}
    return value
