"""The flat-frontmatter fast path reads exactly what PyYAML reads (or hands over to it)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from echo_core import frontmatter_fast, yaml_bounded
from echo_core.frontmatter import _fast_load, parse_frontmatter
from echo_core.yaml_bounded import plain_loader


def _pyyaml(block: str) -> tuple[dict[str, Any], bool]:
    """What the PyYAML plain loader makes of a block: (mapping, ok)."""
    try:
        data = yaml.load(block, Loader=plain_loader())
    except yaml.YAMLError:
        return {}, False
    if data is None:
        return {}, True
    return (data, True) if isinstance(data, dict) else ({}, False)


WORDS = ["active", "complete", "on-hold", "Vantage Systems", "yes", "No", "TRUE", "off", "On",
         "null", "Null", "~", "y", "n", "NaN", ".inf", "-.inf", ".nan", "inf", "0", "7", "12",
         "007", "0x1F", "0o17", "0b101", "1_000", "1:30", "190:20:30", "1.5", "1e5", "1.0e+5",
         "-3", "+4", "2026-03-01", "2026-13-45", "2026-03-01T09:30:00", "2026-3-1", "12:30",
         "a: b", "a:b", "a #b", "a#b", "#x", "it's", "say \"hi\"", "'quoted'", "\"dq\"",
         "&anchor", "*alias", "!tag x", "!!str 1", "|", ">", "%x", "@x", "`x`", "a, b", "[x]",
         "{a: b}", "a [b]", "- item", "-", "?", "? q", "x:", "Café Crème", "naïve", "日本",
         "a\u2028b", "a\x85b", "a\ufeffb", "tab\there", "trailing ", "  lead", "=", "<<",
         "Über", "ß", "x" * 40, "k8s", "S3 bucket", "a - b", "a -b", "v1.2.3", "x/y", "a?b",
         "", '"2026-03-01"', '""', '"a # b"', '"x: y"', '"a, b"', '"[x]"', '"back\\slash"',
         '"tab\tin"', '"a" b', '"a"b"', '"yes"', '"12"', '"é  "', '" spaced "']
#: Every YAML 1.1 bool and null spelling PyYAML resolves, and near misses (strings).
SPECIAL = ["yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False",
           "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "~", "yEs",
           "oN", "nULL", "Y", "N", "none", "None", "y", "n"]
KEYS = ["type", "status", "updated", "created", "tags", "aliases", "title", "x", "a-b", "a_b",
        "1", "yes", "null", "key with space", "?x", "-k", "k:", "'q'", "Type", "type"]

PLAIN = st.from_regex(r"[A-Za-z][A-Za-z0-9 ._/()+-]{0,10}[A-Za-z0-9)]?", fullmatch=True)
scalar = st.one_of(st.sampled_from(WORDS), st.sampled_from(SPECIAL), PLAIN, PLAIN,
                   st.text(alphabet=st.sampled_from(list("aZ09 -_:#,[]{}'\".é\u2028~?!&*|>")),
                           max_size=12))


@st.composite
def value_text(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        items = draw(st.lists(scalar, max_size=4))
        sep = draw(st.sampled_from([", ", ",", " , ", ",  "]))
        return "[" + sep.join(items) + "]"
    if kind == 1:
        return ""
    return draw(scalar)


@st.composite
def flat_block(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        key = draw(st.one_of(st.sampled_from(KEYS), st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,6}",
                                                                  fullmatch=True)))
        sep = draw(st.sampled_from([": "] * 12 + [":", ":  ", " : ", ":\t"]))
        tail = draw(st.sampled_from([""] * 20 + [" ", "  # c", "\r"]))
        lines.append(f"{key}{sep}{draw(value_text())}{tail}")
        if draw(st.integers(0, 19)) == 0:
            lines.append(draw(st.sampled_from(["", "# comment", "  nested: 1", "- item", "   "])))
    return "\n".join(lines) + draw(st.sampled_from(["\n", ""]))


@st.composite
def plain_block(draw: st.DrawFn) -> str:
    """Blocks made of what the fast path is meant to take (and a few words it must not)."""
    value = st.one_of(st.sampled_from(SPECIAL), st.sampled_from(WORDS), PLAIN, st.from_regex(r"[0-9]{1,20}", fullmatch=True),
                      st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", fullmatch=True))
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        key = draw(st.one_of(st.sampled_from(KEYS[:12]), st.from_regex(r"[a-z_][a-z0-9_-]{0,6}",
                                                                        fullmatch=True)))
        if draw(st.booleans()):
            lines.append(f"{key}: [{', '.join(draw(st.lists(value, max_size=3)))}]")
        else:
            lines.append(f"{key}: {draw(value)}")
    return "\n".join(lines) + "\n"


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(st.one_of(plain_block(), flat_block()))
@example("type: company\nstatus: active\ncreated: 2024-01-02\nupdated: 2024-02-03\n"
         "tags: [company, kalo]\naliases: [Kalo Company]\n")
@example("tags: []\nx: [ ]\ny:\n")
@example('type: daily\ncreated: "2026-03-01"\ntags: [daily, "x y"]\n')
@example("a: [yes, No, ~, 12, 2026-01-01]\n")
@example("a: x  \n\n\nb:   \nc: [d , e]  \n")  # blank lines, trailing spaces
@example("a: x\n   \nb: y\n")  # a line of spaces
@example("a: x\n  b: y\n")  # an indented line
@example("a: x\nb:y\n")  # no space after the colon
@example("type: |\u2028  # c")  # a block scalar: its last line break counts (found by CI)
def test_fast_path_equals_pyyaml(block: str) -> None:
    fast = _fast_load(block)
    expected, ok = _pyyaml(block)
    if fast is not None:
        assert ok, f"fast path accepted a block PyYAML rejects: {block!r}"
        assert fast == expected and list(fast) == list(expected), block
        assert [type(v) for v in fast.values()] == [type(v) for v in expected.values()], block
    # the note ends the block with a line break before its closing ---, and PyYAML reads
    # that block (a block scalar keeps its last line break)
    framed = block if block.endswith("\n") or not block else block + "\n"
    expected, ok = _pyyaml(framed)
    data, _, error = parse_frontmatter(f"---\n{framed}---\nbody\n")
    assert (error is None) == ok
    assert data == expected


def test_typical_note_frontmatter_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    block = ("type: session\nstatus: complete\ncreated: 2025-01-01\nupdated: 2025-01-31\n"
             "tags: [session, Kalo]\naliases: [Kalo Session]\n")
    monkeypatch.setattr(yaml_bounded, "plain_loader", lambda: pytest.fail("PyYAML was used"))
    data, body, error = parse_frontmatter(f"---\n{block}---\n# Title\n")
    assert error is None and body == "# Title\n"
    assert data == {"type": "session", "status": "complete", "created": "2025-01-01",
                    "updated": "2025-01-31", "tags": ["session", "Kalo"],
                    "aliases": ["Kalo Session"]}


@pytest.mark.parametrize("block", [
    "title: 'Quoted: yes'\n", "n: 1.5\n", "when: 2026-03-01T09:30:00\n", "k: v # note\n",
    "nested:\n  a: 1\n", "list:\n- a\n- b\n", "k: a: b\n", "k: [a, [b]]\n", "url: https://x.y\n",
])
def test_anything_else_is_left_to_pyyaml(block: str) -> None:
    assert _fast_load(block) is None


def test_the_scalar_memo_keeps_only_short_values_and_stays_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    memo: dict[str, object] = {}
    monkeypatch.setattr(frontmatter_fast, "_KNOWN", memo)
    monkeypatch.setattr(frontmatter_fast, "_KNOWN_MAX", 50)
    long_value = "Summary " + "word " * 40
    assert _fast_load(f"summary: {long_value.strip()}\nstatus: active\n") == {
        "summary": long_value.strip(), "status": "active"}
    assert "active" in memo and long_value.strip() not in memo
    for i in range(200):
        assert _fast_load(f"title: Note{i}\n") == {"title": f"Note{i}"}
    assert len(memo) == 50  # full: later values are read, not remembered
