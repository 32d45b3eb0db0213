"""The dated block an update adds to a note, and whether a note holds a body already."""

from __future__ import annotations

from echo_core.frontmatter import split_frontmatter
from echo_core.lazy_pattern import LazyPattern

__all__ = ["holds_body", "update_block"]


def update_block(day: str, body: str) -> list[str]:
    """The lines an update adds under the kind's log heading: ``- <day>: <first line>``,
    then the body's other lines indented two spaces (blank ones kept blank)."""
    first, _, rest = body.partition("\n")
    lines = [f"- {day}: {first.strip()}"]
    lines += [f"  {line}" if line.strip() else "" for line in rest.rstrip().split("\n")] if rest.strip() else []
    return lines


#: A dated bullet's head (``- 2026-03-01: ``), left out when comparing a body's lines.
_DATED_BULLET = LazyPattern(r"- \d{4}-\d{2}-\d{2}: ")


def holds_body(text: str, body: str) -> bool:
    """Whether the note ``text`` holds ``body`` already: its non-blank lines, stripped, as
    consecutive lines of the note (a dated bullet's ``- YYYY-MM-DD: `` head left out), as
    the note's own text when a capture made it or as an earlier update's bullet. An agent
    that captures the same fact again (a retry after a timeout) adds nothing."""
    want = [line.strip() for line in body.splitlines() if line.strip()]
    if not want:
        return True
    have = [_undated(line.strip()) for line in split_frontmatter(text)[1].splitlines()
            if line.strip()]
    size = len(want)
    return any(have[at:at + size] == want for at, line in enumerate(have) if line == want[0])


def _undated(line: str) -> str:
    head = _DATED_BULLET.match(line)
    return line[head.end():] if head else line
