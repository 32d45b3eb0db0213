"""Hostile frontmatter: every bad block is refused quickly, as data, never raised (SPEC §1.3)."""

from __future__ import annotations

import json
import time

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.frontmatter import parse_frontmatter, render_value, set_frontmatter_key
from echo_core.frontmatter_fast import fast_load
from echo_core.yaml_bounded import MAX_BLOCK_CHARS, MAX_DEPTH, MAX_EXPANDED, load_block

LEVELS = "abcdefghi"
#: The classic ~390-byte "billion laughs": nine levels of nine aliases each.
BILLION_LAUGHS = "lol: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{LEVELS[i + 1]}: &{LEVELS[i + 1]} [{', '.join(['*' + LEVELS[i]] * 9)}]\n"
    for i in range(8)
)
HOSTILE = {
    "billion-laughs": (BILLION_LAUGHS, f"past {MAX_EXPANDED:,} units"),
    "self-alias": ("a: &a [*a]\n", "alias refers to a node that contains it"),
    "self-alias-map": ("a: &a {b: *a}\n", "alias refers to a node that contains it"),
    "self-merge": ("a: &a {<<: *a}\n", "alias refers to a node that contains it"),
    "deep-flow": ("x: " + "[" * 200 + "]" * 200 + "\n", f"more than {MAX_DEPTH} deep"),
    "deep-via-alias": (
        "a: &a " + "[" * 20 + "]" * 20 + "\nb: " + "[" * 20 + "*a" + "]" * 20 + "\n",
        f"more than {MAX_DEPTH} deep",
    ),
    "huge-block": ("k: [" + "x, " * 40_000 + "x]\n", f"limit of {MAX_BLOCK_CHARS:,}"),
    "huge-flat-block": ("k: " + "word " * 20_000 + "\n", f"limit of {MAX_BLOCK_CHARS:,}"),
    "bad-bool-tag": ("a: !!bool maybe\n", "tag cannot hold"),
    "bad-float-tag": ("a: !!float x\n", "tag cannot hold"),
}


def _note(block: str) -> str:
    return f"---\n{block}---\n# Title\n\nBody stays readable.\n"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_block_is_refused_fast_and_the_body_stays_readable(name: str) -> None:
    block, reason = HOSTILE[name]
    started = time.perf_counter()
    data, body, error = parse_frontmatter(_note(block))
    elapsed = time.perf_counter() - started
    assert elapsed < 0.5, f"{name} took {elapsed:.2f}s"
    assert data == {} and body == "# Title\n\nBody stays readable.\n"
    assert error is not None and reason in error, error
    assert "frontmatter" in error


@pytest.mark.parametrize("block", [
    "a: &x {b: 1}\nc: {<<: *x, d: 2}\n",
    "base: &b [x, y]\nagain: *b\n",
])
def test_aliases_within_the_bounds_still_read(block: str) -> None:
    data, _, error = parse_frontmatter(_note(block))
    assert error is None and data, data
    json.dumps(data)  # finite, acyclic


@pytest.mark.parametrize("literal", ["9" * 4301, "9" * 20_000, "0x" + "f" * 5000, "-" + "1" * 5000])
def test_integer_too_long_to_print_is_kept_as_text(literal: str) -> None:
    data, _, error = parse_frontmatter(_note(f"n: {literal}\nm: 12\n"))
    assert error is None
    assert data == {"n": literal, "m": 12}
    json.dumps(data)


def test_integer_at_the_digit_limit_is_still_an_int() -> None:
    data, _, error = parse_frontmatter(_note("n: " + "9" * 4300 + "\n"))
    assert error is None and data["n"] == 10**4300 - 1


def test_long_line_of_inner_spaces_is_read_in_linear_time() -> None:
    started = time.perf_counter()
    data, _, error = parse_frontmatter(_note("k: a" + " " * 60_000 + "b\n"))
    assert time.perf_counter() - started < 0.5
    assert error is None and data == {"k": "a" + " " * 60_000 + "b"}


def test_fast_path_never_takes_a_block_over_the_size_bound() -> None:
    block = "k: word\n" * (MAX_BLOCK_CHARS // 8 + 1)
    assert fast_load(block) is not None  # flat: the fast path alone would read it
    data, _, error = parse_frontmatter(_note(block))
    assert data == {} and error is not None and f"{MAX_BLOCK_CHARS:,}" in error
    assert load_block(block) == ({}, error)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_setting_a_key_on_a_hostile_note_is_line_wise_and_quick(name: str) -> None:
    text = _note(HOSTILE[name][0])
    started = time.perf_counter()
    result = set_frontmatter_key(text, "status", "done")
    assert time.perf_counter() - started < 0.5
    assert result.endswith("status: done\n---\n# Title\n\nBody stays readable.\n")


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("value", [10**5000, _nested(MAX_DEPTH + 2), _nested(5000)],
                         ids=["int-5001-digits", "nested-34", "nested-5000"])
def test_unstorable_values_are_a_usage_error(value: object) -> None:
    with pytest.raises(EchoError) as caught:
        render_value(value)
    assert caught.value.code == ExitCode.USAGE


def test_a_value_that_contains_itself_is_a_usage_error() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(EchoError) as caught:
        set_frontmatter_key("---\na: 1\n---\n", "b", loop)
    assert caught.value.code == ExitCode.USAGE


def test_merge_key_cannot_be_set() -> None:
    with pytest.raises(EchoError) as caught:
        set_frontmatter_key("---\na: 1\n---\n", "<<", {"b": 1})
    assert caught.value.code == ExitCode.USAGE and "merge key" in caught.value.message
