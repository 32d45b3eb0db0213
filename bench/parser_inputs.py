"""Generated inputs for the note parsers and editors (bench/fuzz_parsers.py, tests).

Everything is drawn through a ``Chooser`` (``random.Random`` fits; the tests adapt
hypothesis' ``data.draw``), so one generator serves the seeded bench and the shrinking
property tests. Notes mix markdown structure: frontmatter fences (closed, unclosed, odd),
CR / LF / CRLF / lone CR endings, a BOM, ATX headings of every level and malformed ones,
``` and ~~~ fences open and closed, indented code, hostile YAML, unicode, huge lines.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Chooser(Protocol):
    """The two draws the generator needs."""

    def choice(self, seq: Sequence[T]) -> T: ...

    def randint(self, a: int, b: int) -> int: ...


TITLES = ["Log", "Notes", "Related", "Agent Log", "T", "Scope", "a # #", "C#", "x ##",
          "Café", "日本語", "Log\u00a0", "#tag", "Related  ", "LOG", "a\rb", "\u2028x"]
HEADING_ARGS = [*TITLES, *("#" * n + " " + t for n in (1, 2, 3, 6) for t in TITLES[:6]),
                "", "   ", "#", "##", "## #", "####### x", "a\nb", "## Log ##", "### sub"]
YAML_LINES = [
    "type: person", "status: active", "created: 2026-01-02", "tags: [a, b]", "tags: []",
    "aliases: [Ada, 'Lady L']", "tags:\n  - infra\n  - deploy", "# comment", "",
    "title: 'it''s'", 'q: "esc \\u2028 \\x85"', "k: |\n  block\n  text", "k: >\n  folded",
    "k: v # trailing", "n: 12", "f: 1.5", "b: yes", "z: ~", "e:", "at: 2026-01-02 10:30:00",
    "x: 0x1F", "t: 1:30", "big: 12345678901234567890", "a: &x 1", "b: *x",
    "m: &m {k: v}", "mm: {<<: *m, j: 1}", "c: &c [*c]", "d: &d {d: *d}", "<<: {a: 1}",
    "? complex\n: v", "k: [a, [b, {c: d}]]", "k: {a: b", "k: [unclosed", "\tk: tab",
    "k: \x85", "ключ: значение", "k: !!bool maybe", "k: !!float x", "k: !!int x", "k: !x y",
    "k: !!binary aGk=", "k: !!set {a, b}", "k: !!omap [a: 1]", "- top level list", "just text",
    "k: " + "[" * 40 + "]" * 40, "dup: 1", "dup: 2",
    "'quoted key': 1", "yes: 1", "2: two", "k:", "  indented: 1", "k: 'unterminated",
    "k: a" + " " * 300 + "b", "k: @at", "k: `tick`", "%YAML 1.1", "--- x", "...x",
]
#: Costly hostile lines, drawn into one block in 40.
RARE_YAML_LINES = ["big: " + "9" * 4400, "hex: 0x" + "f" * 3700, "k: " + "[" * 1200 + "]" * 1200,
                   "k: " + "{a: " * 300 + "}" * 300, "k: a" + " " * 30_000 + "b"]
LAUGHS = "lol: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"l{i}: &a{i} [{', '.join(['*a' if i == 0 else f'*a{i - 1}'] * 9)}]\n" for i in range(8))
BODY_LINES = [
    "", "", "", " ", "\t", "text", "Intro paragraph.", "- 2026-01-01: first", "  - nested",
    "- [[Ada Lovelace]]", "see [[a|b]] and [[c#d]] and ![[e]]", "`[[not a link]]`", "[[#h]]",
    "```", "```", "````", "```py", "``` `x`", "   ```", "~~~", "~~~", "~~~~ ruby", "    ```",
    "    ## indented code", "\t# tab heading", "---", "...", "***", "#", "##", "# #",
    "## ##", "#no-space", "####### seven", "<!-- html -->", "<pre>", "> ## quoted",
    "\ufeff# bom heading", "日本語のテキスト", "naïve café", "a\rb", "a\x00b", "\u2028",
    "- 2026-01-01: dated\r", "trailing spaces   ", "## Log", "## Notes", "# T", "### sub",
    "## Related", "## Agent Log",
]
ENDINGS = ["\n", "\n", "\n", "\r\n", "\r"]
KEYS = ["type", "status", "tags", "updated", "aliases", "title", "k", "dup", "new key",
        "yes", "a-b", "Ünïcode", "", " a", "a:", "#x", "-k", "<<", "k\n", "a #b", "'q'"]


def _heading(draw: Chooser) -> str:
    hashes = "#" * draw.randint(1, 7)
    sep = draw.choice([" ", " ", "  ", "\t", ""])
    closing = draw.choice(["", "", " #", " ##", "#", " # #", "   "])
    return " " * draw.randint(0, 4) * (draw.randint(0, 5) == 0) + hashes + sep + draw.choice(
        TITLES) + closing


def _huge(draw: Chooser) -> str:
    return draw.choice(["x", " ", "# ", "[[", "`", "a "]) * draw.randint(1_000, 40_000)


def _body_line(draw: Chooser) -> str:
    kind = draw.randint(0, 9)
    if kind <= 2:
        return _heading(draw)
    if kind == 3 and draw.randint(0, 100) == 0:
        return "# a" + _huge(draw) + "b"
    return draw.choice(BODY_LINES)


def _yaml_block(draw: Chooser) -> list[str]:
    if draw.randint(0, 30) == 0:
        return LAUGHS.splitlines()
    lines = [draw.choice(YAML_LINES) for _ in range(draw.randint(0, 6))]
    if draw.randint(0, 40) == 0:
        lines.append(draw.choice(RARE_YAML_LINES))
    if draw.randint(0, 200) == 0:
        lines.append("k: " + _huge(draw))
    return [part for line in lines for part in line.split("\n")]


def note_text(draw: Chooser) -> str:
    """One note: optional BOM and frontmatter, then body lines, in mixed line endings."""
    eol = draw.choice(ENDINGS[:4])
    lines: list[str] = []
    if draw.randint(0, 2):
        lines.append(draw.choice(["---", "---", "---", "--- ", "---\t", "----", " ---"]))
        lines += _yaml_block(draw)
        closer = draw.choice(["---", "---", "---", "...", "--- ", "", "--- x"])
        if closer:
            lines.append(closer)
    lines += [_body_line(draw) for _ in range(draw.randint(0, 12))]
    parts = []
    for line in lines:
        ending = eol if draw.randint(0, 7) else draw.choice(ENDINGS)
        parts.append(line + ending)
    if parts and draw.randint(0, 4) == 0:
        parts[-1] = parts[-1].rstrip("\n") if draw.randint(0, 1) else parts[-1].rstrip("\r\n")
    return ("\ufeff" if draw.randint(0, 9) == 0 else "") + "".join(parts)


def heading_arg(draw: Chooser, text: str) -> str:
    """A heading argument: often one the note has, sometimes an odd one."""
    present = [line.strip() for line in text.split("\n") if line.lstrip(" ").startswith("#")]
    if present and draw.randint(0, 2) == 0:
        return draw.choice(present)
    return draw.choice(HEADING_ARGS)


def append_lines(draw: Chooser) -> list[str]:
    """Lines to append: bullets mostly, with headings, fences and embedded breaks."""
    pool = ["- 2026-03-01: new fact", "  indented detail", "- [[Ada Lovelace]]", "line\nbreak",
            "crlf\r\ninside", "cr\rinside", "", "   ", "```", "~~~ txt", "## Log", "# Top",
            "### deeper", "---", "...", "- 2026-01-01: first", "trailing   ", "日本"]
    return [draw.choice(pool) if draw.randint(0, 5) else _body_line(draw)
            for _ in range(draw.randint(0, 3))]


def value(draw: Chooser, depth: int = 0) -> Any:
    """A value to store in frontmatter: scalars of every kind, lists, mappings."""
    kind = draw.randint(0, 11 if depth < 3 else 8)
    if kind == 0:
        return draw.choice(["", "plain", "yes", "12", "2026-01-01", "a: b", "a #b", "'q'",
                            "\"dq\"", "line\nbreak", "tab\t", "\u2028", "\x85", "\ud800",
                            "日本", " lead", "trail ", "[x]", "{a: b}", "*alias", "&anchor",
                            "null", "~", "- item", "x" * 300, "\x00", "\ufeff"])
    if kind == 1:
        return draw.choice([0, 1, -7, 10**18, 10**4299, 10**4300, 10**5000])
    if kind == 2:
        return draw.choice([0.0, 1.5, -0.0, 1e300, float("inf"), float("-inf"), float("nan")])
    if kind == 3:
        return draw.choice([True, False, None])
    if kind == 4:
        return draw.choice([dt.date(2026, 1, 2), dt.datetime(2026, 1, 2, 10, 30)])
    if kind <= 8:
        return draw.choice(["status", "Ada Lovelace", "done", "v1.2.3", "Café"])
    if kind <= 10:
        return [value(draw, depth + 1) for _ in range(draw.randint(0, 3))]
    return {draw.choice(["a", "b", "c d", "1"]): value(draw, depth + 1)
            for _ in range(draw.randint(0, 3))}


def key(draw: Chooser) -> str:
    """A frontmatter key, valid (mostly) or not."""
    return draw.choice(KEYS[:12]) if draw.randint(0, 3) else draw.choice(KEYS)
