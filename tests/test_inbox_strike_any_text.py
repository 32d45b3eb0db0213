"""Striking an inbox line works whatever the line says: a trailing backslash, ``~~`` or a
lone ``~`` in the text, backticks, trailing spaces. The struck line is ONE strikethrough
of the whole original text followed by where it went (the backslash no longer escapes
the closing ``~~``, a ``~~`` in the text no longer closes it early), ``struck_original``
gives the original back exactly, and re-running triage or review strikes nothing twice
and loses no line."""

from __future__ import annotations

import html
import itertools
import re
from pathlib import Path

import markdown_it
import pytest

from echo_core.ops.inbox_marks import (
    expired_line,
    processed_line,
    struck_lines,
    struck_original,
    struck_target,
)
from echo_core.ops.inbox_review import review_inbox
from echo_core.ops.triage import apply_proposals, list_inbox
from tests.capture_kit import VaultBox

INBOX = "inbox/captures/inbox.md"
DAY = "2026-03-01"
TARGET = "resources/concepts/x.md"
#: (inbox line, what a reader sees struck through: the line without its bullet as typed,
#: its code spans and backslash escapes rendered; a trailing backslash run shows whole)
TRICKY = (
    ("- 2026-02-20: path is C:\\temp\\", "2026-02-20: path is C:\\temp\\"),
    ("- 2026-02-20: two backslashes \\\\", "2026-02-20: two backslashes \\\\"),
    ("- 2026-02-21: use ~~old~~ not new", "2026-02-21: use ~~old~~ not new"),
    ("- 2026-02-21: odd a ~~b tilde", "2026-02-21: odd a ~~b tilde"),
    ("- 2026-02-21: about 5~", "2026-02-21: about 5~"),
    ("- 2026-02-21: escaped \\~ tilde \\~~", "2026-02-21: escaped \\~ tilde \\~~"),
    ("- 2026-02-22: run `ls ~~x` now", "2026-02-22: run ls ~~x now"),
    ("- 2026-02-22: odd ` backtick ~~a", "2026-02-22: odd ` backtick ~~a"),
    ("- 2026-02-22: ends in code `C:\\`", "2026-02-22: ends in code C:\\"),
    ("- 2026-02-22: not code \\`x\\` \\\\`y`", "2026-02-22: not code `x` \\y"),
    ("- 2026-02-23: ends in spaces   ", "2026-02-23: ends in spaces"),
)


def _render(line: str) -> str:
    """The HTML a CommonMark + GFM-strikethrough renderer makes of ``line``."""
    md = markdown_it.MarkdownIt("commonmark").enable("strikethrough")
    out: str = md.render(line)
    return out


def _struck_text(line: str, suffix: str) -> str:
    """What ``line`` renders struck through, asserting the strike is one element that
    starts the item and ends right before ``suffix``."""
    rendered = _render(line)
    found = re.fullmatch(r"<ul>\n<li><s>(.*)</s>(.*)</li>\n</ul>\n", rendered,
                         re.DOTALL)
    assert found, rendered
    inner, after = found.groups()
    assert "<s>" not in inner and "</s>" not in inner, rendered
    assert html.unescape(after) == suffix, rendered
    return html.unescape(re.sub(r"</?code>", "", inner))


@pytest.mark.parametrize(("line", "seen"), TRICKY)
def test_a_processed_line_is_one_strike_of_the_whole_text(line: str, seen: str) -> None:
    struck = processed_line(line, TARGET, DAY)
    assert _struck_text(struck, f" → {TARGET} (processed {DAY})") == seen
    assert struck_original(struck) == line.strip()
    assert struck_target(struck) == TARGET


@pytest.mark.parametrize(("line", "seen"), TRICKY)
def test_an_expired_line_is_one_strike_of_the_whole_text(line: str, seen: str) -> None:
    struck = expired_line(line, DAY)
    assert _struck_text(struck, f" (expired {DAY})") == seen
    assert struck_original(struck) == line.strip()
    assert struck_target(struck) is None


def test_every_short_text_comes_back_exactly_from_its_struck_line() -> None:
    for size in range(7):
        for chars in itertools.product("\\~` a", repeat=size):
            line = f"- 2026-02-20: x{''.join(chars)}x"
            assert struck_original(processed_line(line, TARGET, DAY)) == line, line
            assert struck_original(expired_line(line, DAY)) == line, line


def test_every_short_text_stays_inside_one_strike() -> None:
    for size in range(5):
        for chars in itertools.product("\\~` a", repeat=size):
            line = f"- 2026-02-20: x{''.join(chars)}"
            _struck_text(processed_line(line, TARGET, DAY), f" → {TARGET} (processed {DAY})")


def test_lines_struck_before_escaping_are_still_read() -> None:
    old = "- ~~2026-02-20: path is C:\\temp\\~~ → resources/concepts/x.md (processed 2026-03-01)"
    assert struck_original(old) == "- 2026-02-20: path is C:\\temp\\"
    plain = "- ~~2026-02-21: met Ada~~ → resources/people/ada.md (processed 2026-03-01)"
    assert struck_lines(plain) == {"- 2026-02-21: met Ada": plain}


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    """An initialised vault whose inbox holds every tricky line, then one plain line."""
    vault = VaultBox(tmp_path).init()
    with (vault.vault / INBOX).open("a", encoding="utf-8", newline="") as inbox:
        inbox.write("".join(f"{line}\n" for line, _ in TRICKY) + "- 2026-02-26: keep me\n")
    return vault


def _proposals() -> list[dict[str, str]]:
    return [{"line": line, "title": f"Tricky {n}", "kind": "concept"}
            for n, (line, _) in enumerate(TRICKY)]


def test_triage_strikes_each_tricky_line_once_and_a_rerun_changes_nothing(box: VaultBox) -> None:
    before = box.read(INBOX)
    env = apply_proposals(box.ctx(), _proposals(), apply=True)
    assert [i.classification for i in env.data.items] == ["created"] * len(TRICKY)
    text = box.read(INBOX)
    assert len(text.splitlines()) == len(before.splitlines())
    assert text.endswith("\n- 2026-02-26: keep me\n")
    for (line, seen), item in zip(TRICKY, env.data.items, strict=True):
        [struck] = [ln for ln in text.splitlines() if struck_original(ln) == line.strip()]
        assert _struck_text(struck, f" → {item.path} (processed {DAY})") == seen
    assert [i.line for i in list_inbox(box.ctx()).data.items] == ["- 2026-02-26: keep me"]

    again = apply_proposals(box.ctx(), _proposals(), apply=True)
    assert [i.classification for i in again.data.items] == ["done"] * len(TRICKY)
    assert [i.path for i in again.data.items] == [i.path for i in env.data.items]
    assert box.read(INBOX) == text


def test_inbox_review_expires_each_tricky_line_once(box: VaultBox) -> None:
    decisions = [{"line": line, "action": "expire"} for line, _ in TRICKY]
    env = review_inbox(box.ctx(), decisions, apply=True)
    assert [i.outcome for i in env.data.items if i.line != "- 2026-02-26: keep me"] == [
        "expired"] * len(TRICKY)
    text = box.read(INBOX)
    for line, seen in TRICKY:
        [struck] = [ln for ln in text.splitlines() if struck_original(ln) == line.strip()]
        assert _struck_text(struck, f" (expired {DAY})") == seen
    again = review_inbox(box.ctx(), decisions, apply=True)
    assert {i.outcome for i in again.data.items if i.line != "- 2026-02-26: keep me"} == {"done"}
    assert box.read(INBOX) == text
    assert env.data.waiting == again.data.waiting == 1


def test_a_crlf_inbox_keeps_its_line_endings_when_a_backslash_line_is_struck(
        tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    line = "- 2026-02-20: share is \\\\srv\\docs\\"
    (box.vault / INBOX).write_bytes(f"# Inbox\r\n\r\n{line}\r\n- 2026-02-21: next\r\n".encode())
    env = apply_proposals(box.ctx(), [{"line": line, "title": "Docs share",
                                       "kind": "concept"}], apply=True)
    assert env.data.items[0].classification == "created"
    raw = (box.vault / INBOX).read_bytes().decode()
    assert raw.count("\r\n") == 4 and raw.endswith("\r\n- 2026-02-21: next\r\n")
    assert list(struck_lines(raw)) == [line]
