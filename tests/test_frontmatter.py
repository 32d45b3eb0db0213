"""Frontmatter parsing and surgical editing (SPEC §1.3)."""

from __future__ import annotations

import datetime as dt
import difflib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from echo_core.errors import EchoError, ExitCode
from echo_core.frontmatter import (
    line_ending,
    parse_frontmatter,
    remove_frontmatter_key,
    render_frontmatter,
    render_value,
    set_frontmatter_key,
    split_frontmatter,
)

NOTE = (
    "---\n"
    "# managed by echo\n"
    "title: 'Deploy notes'\n"
    'type: "project"\n'
    "tags:\n"
    "  - infra\n"
    "  - deploy\n"
    "\n"
    "created: 2026-01-02\n"
    "status: active\n"
    "---\n"
    "# Deploy notes\n"
    "\n"
    "Body text.\n"
)


def line_changes(before: str, after: str) -> tuple[list[str], list[str]]:
    """Lines removed from and added to ``before`` (line endings kept, split on LF)."""
    removed: list[str] = []
    added: list[str] = []
    for row in difflib.ndiff(before.split("\n"), after.split("\n")):
        if row.startswith("- "):
            removed.append(row[2:])
        elif row.startswith("+ "):
            added.append(row[2:])
    return removed, added


# --- reading ---------------------------------------------------------------------------


def test_parse_returns_mapping_in_file_order_and_body() -> None:
    data, body, error = parse_frontmatter(NOTE)
    assert error is None
    assert list(data) == ["title", "type", "tags", "created", "status"]
    assert data["tags"] == ["infra", "deploy"]
    assert body == "# Deploy notes\n\nBody text.\n"


def test_parse_keeps_dates_and_timestamps_as_strings() -> None:
    text = (
        "---\ncreated: 2026-01-02\nat: 2026-01-02 10:30:00\nexplicit: !!timestamp 2026-01-03\n---\n"
    )
    data, _, error = parse_frontmatter(text)
    assert error is None
    assert data == {"created": "2026-01-02", "at": "2026-01-02 10:30:00", "explicit": "2026-01-03"}


def test_parse_resolves_other_scalars_normally() -> None:
    data, _, _ = parse_frontmatter("---\nn: 3\nf: 1.5\nb: true\nz: null\ne:\n---\n")
    assert data == {"n": 3, "f": 1.5, "b": True, "z": None, "e": None}


def test_parse_keys_are_their_literal_text() -> None:
    data, _, error = parse_frontmatter('---\nyes: 1\n2: two\n"quoted key": 3\n---\n')
    assert error is None
    assert data == {"yes": 1, "2": "two", "quoted key": 3}


def test_parse_without_frontmatter_returns_whole_text_as_body() -> None:
    text = "# Title\n\n---\nnot: frontmatter\n---\n"
    assert parse_frontmatter(text) == ({}, text, None)


def test_parse_malformed_yaml_reports_error_and_keeps_body() -> None:
    data, body, error = parse_frontmatter("---\ntitle: [unclosed\n---\n# Body\n")
    assert data == {}
    assert body == "# Body\n"
    assert error is not None and "not valid YAML" in error


def test_parse_non_mapping_block_reports_error() -> None:
    data, body, error = parse_frontmatter("---\n- a\n- b\n---\nbody")
    assert (data, body) == ({}, "body")
    assert error is not None and "not a mapping" in error


def test_parse_unclosed_block_reports_error_and_keeps_text() -> None:
    text = "---\ntitle: x\n# Body\n"
    data, body, error = parse_frontmatter(text)
    assert (data, body) == ({}, text)
    assert error is not None and "closing" in error


def test_parse_empty_or_comment_only_block_is_empty_mapping() -> None:
    assert parse_frontmatter("---\n---\nbody") == ({}, "body", None)
    assert parse_frontmatter("---\n# just a comment\n---\n") == ({}, "", None)


def test_parse_handles_crlf_and_bom() -> None:
    text = "\ufeff---\r\ntitle: x\r\ntags: [a, b]\r\n---\r\n# Body\r\n"
    assert parse_frontmatter(text) == ({"title": "x", "tags": ["a", "b"]}, "# Body\r\n", None)


def test_parse_accepts_dots_as_closing_line() -> None:
    assert parse_frontmatter("---\na: 1\n...\nbody\n") == ({"a": 1}, "body\n", None)


def test_split_frontmatter_returns_raw_block_text() -> None:
    assert split_frontmatter("---\r\na: 1 # c\r\n---\r\nbody") == ("a: 1 # c\r\n", "body", None)
    assert split_frontmatter("plain") == (None, "plain", None)


def test_line_ending_detects_dominant_style() -> None:
    assert line_ending("a\r\nb\r\nc\n") == "\r\n"
    assert line_ending("a\nb\r\n") == "\n"
    assert line_ending("no newline") == "\n"


# --- surgical edits ---------------------------------------------------------------------


def test_set_key_changes_only_that_line() -> None:
    out = set_frontmatter_key(NOTE, "status", "archived")
    assert out == NOTE.replace("status: active\n", "status: archived\n")
    assert line_changes(NOTE, out) == (["status: active"], ["status: archived"])


def test_set_key_keeps_crlf_and_comments() -> None:
    text = NOTE.replace("\n", "\r\n")
    out = set_frontmatter_key(text, "status", "done")
    assert out == text.replace("status: active\r\n", "status: done\r\n")
    assert line_changes(text, out) == (["status: active\r"], ["status: done\r"])


def test_set_key_keeps_quoting_style_of_other_keys() -> None:
    out = set_frontmatter_key(NOTE, "created", "2026-02-03")
    assert "title: 'Deploy notes'\n" in out and 'type: "project"\n' in out
    assert line_changes(NOTE, out) == (["created: 2026-01-02"], ['created: "2026-02-03"'])


def test_set_key_replaces_multiline_list_value_with_one_line() -> None:
    out = set_frontmatter_key(NOTE, "tags", ["infra", "ops"])
    assert out == NOTE.replace("tags:\n  - infra\n  - deploy\n", "tags: [infra, ops]\n")
    assert parse_frontmatter(out)[0]["tags"] == ["infra", "ops"]


def test_set_key_replaces_unindented_list_and_block_scalar_but_keeps_next_comment() -> None:
    text = "---\ntags:\n- a\n- b\nsummary: |\n  line one\n\n  line two\n# about owner\nowner: me\n---\n"
    out = set_frontmatter_key(set_frontmatter_key(text, "tags", []), "summary", "short")
    assert out == "---\ntags: []\nsummary: short\n# about owner\nowner: me\n---\n"


def test_set_new_key_appends_one_line_before_closing_line() -> None:
    out = set_frontmatter_key(NOTE, "updated", dt.date(2026, 3, 1))
    assert out == NOTE.replace(
        "status: active\n---\n", "status: active\nupdated: 2026-03-01\n---\n"
    )
    assert line_changes(NOTE, out) == ([], ["updated: 2026-03-01"])


def test_set_new_key_uses_dominant_crlf_ending() -> None:
    text = "---\r\na: 1\r\n---\r\nbody\r\n"
    assert set_frontmatter_key(text, "b", 2) == "---\r\na: 1\r\nb: 2\r\n---\r\nbody\r\n"


def test_set_key_without_frontmatter_prepends_block() -> None:
    assert (
        set_frontmatter_key("# T\n\nbody", "status", "new") == "---\nstatus: new\n---\n# T\n\nbody"
    )
    assert set_frontmatter_key("# T\r\nbody\r\n", "a", 1) == "---\r\na: 1\r\n---\r\n# T\r\nbody\r\n"
    assert set_frontmatter_key("", "a", "x") == "---\na: x\n---\n"


def test_set_key_keeps_missing_trailing_newline() -> None:
    text = "---\na: 1\n---\nlast line"
    out = set_frontmatter_key(text, "a", 2)
    assert out == "---\na: 2\n---\nlast line"
    assert line_changes(text, out) == (["a: 1"], ["a: 2"])
    assert set_frontmatter_key("---\na: 1\n---", "a", 2) == "---\na: 2\n---"


def test_set_key_keeps_bom() -> None:
    text = "\ufeff---\na: 1\n---\nbody\n"
    out = set_frontmatter_key(text, "b", "x")
    assert out == "\ufeff---\na: 1\nb: x\n---\nbody\n"
    assert line_changes(text, out) == ([], ["b: x"])
    assert set_frontmatter_key("\ufeffbody\n", "a", 1) == "\ufeff---\na: 1\n---\nbody\n"


def test_set_key_keeps_unusual_key_order() -> None:
    text = "---\nzeta: 1\nalpha: 2\nmid: 3\n---\n"
    out = set_frontmatter_key(text, "alpha", 20)
    assert out == "---\nzeta: 1\nalpha: 20\nmid: 3\n---\n"
    assert line_changes(text, out) == (["alpha: 2"], ["alpha: 20"])
    assert list(parse_frontmatter(out)[0]) == ["zeta", "alpha", "mid"]


def test_set_key_keeps_quoted_key_spelling_and_blank_lines() -> None:
    text = '---\n"status": old\n\n\nother: x   # trailing comment\n---\n'
    out = set_frontmatter_key(text, "status", "new")
    assert out == '---\n"status": new\n\n\nother: x   # trailing comment\n---\n'
    assert line_changes(text, out) == (['"status": old'], ['"status": new'])


def test_set_key_replaces_list_with_comment_between_items() -> None:
    text = "---\ntags:\n  - a\n# old ones\n  - b\n\n# owner below\nowner: me\n---\n"
    out = set_frontmatter_key(text, "tags", ["c"])
    assert out == "---\ntags: [c]\n\n# owner below\nowner: me\n---\n"


def test_set_key_to_current_value_returns_text_unchanged() -> None:
    assert set_frontmatter_key(NOTE, "title", "Deploy notes") is NOTE
    assert set_frontmatter_key(NOTE, "tags", ("infra", "deploy")) is NOTE


def test_set_key_edits_last_of_duplicate_keys() -> None:
    text = "---\na: 1\na: 2\n---\n"
    out = set_frontmatter_key(text, "a", 3)
    assert out == "---\na: 1\na: 3\n---\n"
    assert parse_frontmatter(out)[0] == {"a": 3}


def test_set_key_in_malformed_block_edits_only_the_key_line() -> None:
    text = "---\ntitle: [broken\nstatus: draft\n---\nbody\n"
    assert (
        set_frontmatter_key(text, "status", "done")
        == "---\ntitle: [broken\nstatus: done\n---\nbody\n"
    )
    assert (
        set_frontmatter_key(text, "new", 1)
        == "---\ntitle: [broken\nstatus: draft\nnew: 1\n---\nbody\n"
    )


@pytest.mark.parametrize(
    "key", ["", " lead", "a:b", "two\nlines", "#tag", "-dash", "'q'", "x #y", "tab\tkey"]
)
def test_set_key_rejects_keys_that_are_not_simple(key: str) -> None:
    with pytest.raises(EchoError) as info:
        set_frontmatter_key(NOTE, key, 1)
    assert info.value.code == ExitCode.USAGE
    assert repr(key) in info.value.message


def test_set_key_rejects_unclosed_block_and_unstorable_values() -> None:
    with pytest.raises(EchoError) as info:
        set_frontmatter_key("---\na: 1\nbody\n", "a", 2)
    assert info.value.code == ExitCode.USAGE and "closing" in info.value.message
    with pytest.raises(EchoError) as info:
        set_frontmatter_key(NOTE, "a", object())
    assert info.value.code == ExitCode.USAGE


def test_set_key_refuses_to_reformat_a_flow_style_block() -> None:
    with pytest.raises(EchoError) as info:
        set_frontmatter_key("---\n{a: 1}\n---\n", "b", 2)
    assert info.value.code == ExitCode.FAILURE


def test_remove_key_deletes_only_its_lines() -> None:
    out = remove_frontmatter_key(NOTE, "tags")
    assert out == NOTE.replace("tags:\n  - infra\n  - deploy\n", "")
    assert remove_frontmatter_key(out, "tags") == out
    assert remove_frontmatter_key("no block\n", "tags") == "no block\n"
    assert remove_frontmatter_key("---\r\na: 1\r\nb: 2\r\n---\r\n", "a") == "---\r\nb: 2\r\n---\r\n"


# --- rendering --------------------------------------------------------------------------


# fmt: off
AMBIGUOUS = [
    "yes", "No", "on", "2026-01-01", "2026-01-01 10:00:00", "a: b", "#x", "", "null", "~",
    "12", "1.5", "0x1f", ".inf", "<<", "=", " lead", "trail ", "a #b", "-x", "*x", "[x]",
    "a, b", "line\nbreak", "tab\there", "nel\x85sep\u2028x", "bom\ufeff", "del\x7f",
]
# fmt: on


@pytest.mark.parametrize("value", AMBIGUOUS)
def test_render_value_quotes_strings_that_would_not_read_back(value: str) -> None:
    text = render_value(value)
    assert text.startswith('"') and "\n" not in text
    assert parse_frontmatter(f"---\nk: {text}\n---\n")[0] == {"k": value}


@pytest.mark.parametrize(
    "value",
    ["hello world", "https://example.com/a?b=c", "C++", "état", "a-b_c.d", "it's", 'say "hi"'],
)
def test_render_value_leaves_safe_strings_plain(value: str) -> None:
    assert render_value(value) == value


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (42, "42"),
        (-1.5, "-1.5"),
        (1e20, "1.0e+20"),
        (float("inf"), ".inf"),
        (dt.date(2026, 1, 2), "2026-01-02"),
        (["a", "b c", 1], "[a, b c, 1]"),
        ([], "[]"),
        ({"a": "b", "n": [1, "yes"]}, '{a: b, n: [1, "yes"]}'),
        ({}, "{}"),
    ],
)
def test_render_value_uses_one_line_flow_style(value: Any, text: str) -> None:
    assert render_value(value) == text


def test_render_frontmatter_writes_new_block_in_order() -> None:
    out = render_frontmatter(
        {
            "title": "Deploy",
            "type": "project",
            "tags": ["infra", "ops"],
            "created": dt.date(2026, 3, 1),
            "status": "yes",
        }
    )
    assert out == (
        "---\ntitle: Deploy\ntype: project\ntags: [infra, ops]\ncreated: 2026-03-01\n"
        'status: "yes"\n---\n'
    )
    assert render_frontmatter({}) == "---\n---\n"
    with pytest.raises(EchoError):
        render_frontmatter({"bad:key": 1})


# --- properties -------------------------------------------------------------------------

SCALARS = st.one_of(
    st.text(max_size=30),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
)
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=4))
TEMPLATES = [
    NOTE,
    NOTE.replace("\n", "\r\n"),
    "\ufeff---\nstatus: x # note\n# c\n---\nno newline",
    "# only body\r\n",
]


@settings(derandomize=True, max_examples=300, deadline=None)
@given(
    template=st.sampled_from(TEMPLATES), key=st.sampled_from(["status", "fresh key"]), value=VALUES
)
def test_set_key_round_trips_and_changes_one_line(template: str, key: str, value: Any) -> None:
    out = set_frontmatter_key(template, key, value)
    data, _, error = parse_frontmatter(out)
    assert error is None
    assert data[key] == value
    old_data = parse_frontmatter(template)[0]
    assert {k: v for k, v in data.items() if k != key} == {
        k: v for k, v in old_data.items() if k != key
    }
    removed, added = line_changes(template, out)
    if "---" not in template:
        assert removed == [] and len(added) == 3
    elif key in old_data:
        assert len(removed) <= 1 and len(added) == len(removed)
    else:
        assert removed == [] and len(added) == 1


@settings(derandomize=True, max_examples=100, deadline=None)
@given(value=VALUES)
def test_set_then_remove_new_key_restores_original_text(value: Any) -> None:
    assert remove_frontmatter_key(set_frontmatter_key(NOTE, "fresh", value), "fresh") == NOTE


def test_set_key_with_an_inline_value_leaves_a_stray_item_line_alone() -> None:
    # a malformed block (a '- item' line after a key that has its value inline) is edited
    # line-wise: the stray line belongs to no key, so setting the key keeps it
    text = "---\n# comment\nyes: 1\n- stray item\nk: [unclosed\n---\nbody\n"
    assert parse_frontmatter(text)[2] is not None
    out = set_frontmatter_key(text, "yes", 2)
    assert out == text.replace("yes: 1\n", "yes: 2\n")
    assert remove_frontmatter_key(text, "yes") == text.replace("yes: 1\n", "")


_WORD_CHARS = "abcdeNOSTYLUrfyn019_- "


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.text(alphabet=_WORD_CHARS, min_size=1, max_size=12))
def test_plain_words_are_judged_as_the_yaml_resolver_judges_them(text: str) -> None:
    """The yaml-free shortcut of ``_plain_ok`` (words starting with a letter) gives the
    resolver's answer: a string stays plain unless YAML 1.1 reads it as a bool or null."""
    from yaml import ScalarNode
    from yaml.resolver import Resolver

    from echo_core import frontmatter

    if not frontmatter._WORDS_RE.fullmatch(text):
        return
    resolved = Resolver().resolve(ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str"
    assert frontmatter._plain_ok(text) is resolved


@pytest.mark.parametrize("text", [
    "yes", "Yes", "YES", "yEs", "no", "No", "NO", "nO", "true", "True", "TRUE", "tRue", "false",
    "False", "FALSE", "on", "On", "ON", "oN", "off", "Off", "OFF", "null", "Null", "NULL",
    "nULL", "y", "Y", "n", "N", "e", "E1", "x1e5", "inf", "nan", "NaN", "concept", "a-b_c d"])
def test_yaml_spellings_of_bools_and_nulls_are_quoted(text: str) -> None:
    from yaml import ScalarNode
    from yaml.resolver import Resolver

    from echo_core import frontmatter

    resolved = Resolver().resolve(ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str"
    assert frontmatter._plain_ok(text) is resolved
