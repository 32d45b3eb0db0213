"""Observations beyond ``KEEP_OBSERVATIONS`` -> yearly archives (SPEC §2.7).

The operator-preferences note's ``## Observations`` section grows by one bullet per
update. When it holds more than ``KEEP_OBSERVATIONS`` top-level items, the oldest (the
first in the file: captures append) are moved, in order, to
``_agent/memory/episodic/observations-archive-YYYY.md``, YYYY being the year of each
item's own date (``- YYYY-MM-DD: ...``; an undated item takes the year of the dated item
before it, else the note's ``created`` year, else today's).

An item is a bullet line at column 0 (``-``, ``*``, ``+`` or ``1.``) with the indented
lines that follow it (a capture's body), blank lines between them included; other lines
of the section are not items and stay. Items keep their exact text: the archive gets
the same lines (in the archive's line ending), appended at its end in the preferences'
order (a new archive is created, LF, with an episodic note's frontmatter, a title and an
``## Observations`` heading; an existing one also gets ``updated`` set, one line). The preferences note loses exactly
those lines and the blank lines right after each.

Crash safety: the archives are written first, the preferences note last. Killed in
between, the items are in both places; the next run finds them again as the oldest, and
appends to each archive only what its end does not hold yet (the longest run of items at
the archive's end that equals the start of the items to move is not appended again),
then removes them from the preferences. No bullet is ever lost or doubled.
"""

from __future__ import annotations

import datetime as _dt
import re

import attrs

from echo_core.frontmatter import (
    line_ending,
    parse_frontmatter,
    render_frontmatter,
    set_frontmatter_key,
)
from echo_core.frontmatter_dates import as_date
from echo_core.notes import find_section
from echo_core.ops.sweep.decay_model import ObservationsArchived

PREFERENCES_PATH = "_agent/memory/semantic/operator-preferences.md"
ARCHIVE_FOLDER = "_agent/memory/episodic"
KEEP_OBSERVATIONS = 30
HEADING = "Observations"
_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")
_ITEM = re.compile(r"(?:[-*+]|\d+[.)])[ \t]")
_ITEM_YEAR = re.compile(r"(?:[-*+]|\d+[.)])[ \t]+(?:\*\*|~~)?(\d{4})-\d{2}-\d{2}")


def archive_path(year: int) -> str:
    """The archive note for ``year``."""
    return f"{ARCHIVE_FOLDER}/observations-archive-{year:04d}.md"


@attrs.frozen
class _Item:
    """One item: offsets ``[start, end)`` of its own lines, ``cut_end`` past the blank
    lines after it, its text and its year."""

    start: int
    end: int
    cut_end: int
    text: str
    year: int


@attrs.frozen
class ArchiveWrite:
    """One archive note: its text now (None: to be created) and its new text."""

    path: str
    prior: str | None
    text: str


@attrs.frozen
class ObservationsPlan:
    """The archives to write (first), then the preferences' new text (None: unchanged)."""

    archives: tuple[ArchiveWrite, ...] = ()
    preferences_prior: str = ""
    preferences: str | None = None
    report: tuple[ObservationsArchived, ...] = ()


def _items(text: str, start: int, end: int, default_year: int) -> list[_Item]:
    """The top-level items of ``text[start:end]`` (the section after its heading)."""
    lines: list[tuple[int, str]] = []
    pos = start
    for line in _LINES.findall(text[start:end]):
        lines.append((pos, line))
        pos += len(line)
    items: list[_Item] = []
    year = default_year
    i = 0
    while i < len(lines):
        at, line = lines[i]
        if not _ITEM.match(line):
            i += 1
            continue
        found = _ITEM_YEAR.match(line)
        year = int(found.group(1)) if found else year
        j = i + 1
        last = i
        while j < len(lines):
            body = lines[j][1]
            if body.strip() and body[0] in " \t":
                last = j
            elif body.strip():
                break
            j += 1
        own_end = lines[last][0] + len(lines[last][1])
        k = last + 1
        while k < len(lines) and not lines[k][1].strip():
            k += 1
        cut_end = lines[k][0] if k < len(lines) else own_end
        items.append(_Item(at, own_end, cut_end, text[at:own_end], year))
        i = last + 1
    return items


def _norm(item: str) -> str:
    return "\n".join(line.rstrip("\r") for line in item.rstrip("\r\n").split("\n"))


def _new_archive(year: int, today: _dt.date, eol: str) -> str:
    """A new archive note (an episodic note: frontmatter, title, one line, heading)."""
    fm = render_frontmatter({"type": "episodic", "status": "active", "created": today,
                             "updated": today, "tags": ["episodic", "observations-archive"]})
    text = (f"{fm}# Observations archive {year}\n\nOlder Observations of "
            f"[[operator-preferences]], moved here by `echo-memory sweep --decay` in their "
            f"order, each with its exact text.\n\n## {HEADING}\n\n")
    return text.replace("\n", eol)


def _appended(archive: str | None, items: list[_Item], year: int,
              today: _dt.date) -> tuple[str | None, int]:
    """The archive's text with the items its end does not hold yet (None: unchanged),
    and how many of ``items`` it now holds that it did not. Items are written in the
    archive's line ending (a new archive: LF)."""
    current = archive if archive is not None else _new_archive(year, today, "\n")
    eol = line_ending(current)
    held: list[str] = []
    span = find_section(current, f"## {HEADING}")
    if span is not None and archive is not None:
        body_start = current.find("\n", span[0]) + 1
        held = [_norm(i.text) for i in _items(current, body_start, span[1], year)]
    wanted = [_norm(i.text) for i in items]
    overlap = 0
    for k in range(min(len(held), len(wanted)), 0, -1):
        if held[-k:] == wanted[:k]:
            overlap = k
            break
    new = items[overlap:]
    if not new:
        return None, 0
    if current and not current.endswith("\n"):
        current += eol
    added = "".join(_norm(i.text).replace("\n", eol) + eol for i in new)
    text = current + added
    if archive is not None:
        text = set_frontmatter_key(text, "updated", today)
    return text, len(new)


def plan_observations(preferences: str | None, archives: dict[str, str | None],
                      today: _dt.date) -> ObservationsPlan:
    """What moving the oldest Observations takes (module docstring). ``archives``: the
    current text of each archive note the items may go to (None: absent); the caller
    reads those named by ``archive_years``."""
    if preferences is None:
        return ObservationsPlan()
    span = find_section(preferences, f"## {HEADING}")
    if span is None:
        return ObservationsPlan()
    fm = parse_frontmatter(preferences)[0]
    created = as_date(fm.get("created"))
    body_start = preferences.find("\n", span[0]) + 1
    items = _items(preferences, body_start, span[1], (created or today).year)
    if len(items) <= KEEP_OBSERVATIONS or body_start == 0:
        return ObservationsPlan()
    moving = items[:len(items) - KEEP_OBSERVATIONS]
    by_year: dict[int, list[_Item]] = {}
    for item in moving:
        by_year.setdefault(item.year, []).append(item)
    writes: list[ArchiveWrite] = []
    report: list[ObservationsArchived] = []
    for year, group in sorted(by_year.items()):
        path = archive_path(year)
        prior = archives.get(path)
        text, _added = _appended(prior, group, year, today)
        if text is not None:
            writes.append(ArchiveWrite(path, prior, text))
        report.append(ObservationsArchived(path, len(group), group[0].text.split("\n")[0]
                                           .rstrip("\r")))
    kept = preferences
    for item in reversed(moving):
        kept = kept[:item.start] + kept[item.cut_end:]
    return ObservationsPlan(tuple(writes), preferences, kept, tuple(report))


def archive_years(preferences: str | None, today: _dt.date) -> list[str]:
    """The archive notes the oldest Observations of ``preferences`` would go to (read
    them, then call ``plan_observations``)."""
    plan = plan_observations(preferences, {}, today)
    return [r.archive for r in plan.report]
