"""Which sections a heading name could mean: ``get --section`` and ``patch --heading``
use the first, and say so when a note has more than one of that title."""

from __future__ import annotations

from echo_core.notes import find_section
from echo_core.ops.patch_targets import HEADING_PATH_SEPARATOR, heading_span

__all__ = ["duplicate_heading"]


def duplicate_heading(path: str, text: str, target: str, *, nested: bool = True) -> str | None:
    """A warning when ``target`` could name more than one section of the note (two
    ``## Notes``; with ``nested``, at any step of a path ``Log::2026``): how many, their
    lines, and that the first was used (as ``heading_span`` and ``notes.find_section``
    do). None when the name is unique or absent."""
    parts = ([part.strip() for part in target.split(HEADING_PATH_SEPARATOR)] if nested
             else [target.strip()])
    for n, part in enumerate(parts):
        region, offset = text, 0
        if n:
            span = heading_span(text, HEADING_PATH_SEPARATOR.join(parts[:n]))
            if span is None:
                return None
            # a leading line break: the section's text is never read as a frontmatter block
            region, offset = "\n" + text[span[0]:span[1]], span[0] - 1
        lines = _section_lines(region, offset, text, part)
        if len(lines) > 1:
            where = ", ".join(str(line) for line in lines)
            return (f"{path} has {len(lines)} sections titled {part!r} (lines {where}); the "
                    f"first (line {lines[0]}) was used: rename the others to reach them")
    return None


def _section_lines(region: str, offset: int, text: str, heading: str) -> list[int]:
    """The line numbers in ``text`` of every section of ``region`` (found at ``offset``
    of ``text``) that ``find_section`` finds for ``heading``: the first, then the next
    after it ends, and so on."""
    lines: list[int] = []
    base, rest = 0, region
    while (found := find_section(rest, heading)) is not None:
        lines.append(text.count("\n", 0, offset + base + found[0]) + 1)
        end = base + found[1]
        if end >= len(region):
            break
        base, rest = end - 1, "\n" + region[end:]
    return lines
