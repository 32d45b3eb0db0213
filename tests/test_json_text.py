"""``json_text``: the JSON every surface prints is the standard library's indented text,
whichever encoder wrote it, and always valid and escaped."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from echo_core import terminal_text
from echo_core.terminal_text import json_text

#: Text of any code point, lone surrogates included (orjson refuses them; the standard
#: encoder writes them as escapes).
_TEXT = st.text(st.characters(exclude_categories=()))
_SCALARS = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | _TEXT
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=20,
)


def _stdlib(payload: Any) -> str:
    """The standard encoder's text, with the same escapes of terminal controls."""
    text = json.dumps(payload, indent=2, ensure_ascii=False)
    return terminal_text._UNSAFE_JSON.sub(terminal_text._json_escape, text)


@given(_VALUES)
def test_json_text_is_the_standard_indented_text_for_payloads_without_floats(payload: Any) -> None:
    text = json_text(payload)
    assert json.loads(text) == payload
    assert text == _stdlib(payload)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_json_text_keeps_every_float_value(value: float) -> None:
    assert json.loads(json_text({"score": value}))["score"] == value


def test_json_text_writes_integers_past_64_bits_through_the_standard_library() -> None:
    payload = {"big": 2**70, "list": [1, (2, 3)]}
    assert json_text(payload) == _stdlib(payload)


def test_json_text_writes_non_string_keys_as_the_standard_library_does() -> None:
    assert json_text({1: "a", "b": None}) == _stdlib({1: "a", "b": None})


def test_json_text_escapes_terminal_controls_in_strings() -> None:
    text = json_text({"title": "evil\x1b[2J\u202e"})
    assert "\x1b" not in text and "\u202e" not in text
    assert json.loads(text) == {"title": "evil\x1b[2J\u202e"}


def test_a_big_payload_and_a_small_one_print_the_same_way() -> None:
    """Small payloads skip orjson's import; big ones use it: the text is the same."""
    import sys

    from echo_core.terminal_text import ORJSON_FROM_VALUES

    small = {"hits": [{"path": f"n/{i}.md", "n": i} for i in range(3)]}
    big = {"hits": [{"path": f"n/{i}.md", "n": i} for i in range(ORJSON_FROM_VALUES)]}
    assert json_text(small) == _stdlib(small)
    assert json_text(big) == _stdlib(big)
    assert "orjson" in sys.modules  # the big one went through it
