"""Expired working notes -> ``status: archived``, body kept under ``## Archived`` (SPEC §2.7).

A working note (every note in the ``working`` kind's folder, PreCompact checkpoints
included: they are captured as kind ``working`` and carry ``expires``) is archived when
its ``expires`` date is before today and its ``status`` is still ``active`` (or
``expired``, the mark ``lint --fix`` leaves). Archiving changes two things and keeps
every other byte:

* the frontmatter line ``status`` becomes ``status: archived`` (one line);
* a line ``## Archived YYYY-MM-DD`` (today) and one blank line are inserted before the
  body: after the ``# Title`` line when the body opens with one (the title stays the
  note's first heading), else at the body's start. Everything from the body's first
  non-blank line after the title to the end is kept byte for byte below the marker. A
  blank line separates the title and the marker.

A note already archived (any other status) is not touched again: a second run does
nothing. A note without ``expires``, or with one that is not a date, is left alone.
"""

from __future__ import annotations

import datetime as _dt
import re

import attrs

from echo_core.errors import EchoError
from echo_core.frontmatter import (
    line_ending,
    parse_frontmatter,
    set_frontmatter_key,
    split_frontmatter,
)
from echo_core.frontmatter_dates import as_date
from echo_core.ops.sweep.decay_model import DecaySkipped, WorkingArchived

ARCHIVED_STATUS = "archived"
#: Statuses of a working note that still counts as live.
LIVE_STATUSES = ("active", "expired")
_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")


@attrs.frozen
class WorkingWrite:
    """One working note to archive: its text now and the archived text."""

    archived: WorkingArchived
    prior: str
    text: str




def with_archived_marker(text: str, day: _dt.date) -> str:
    """``text`` with ``## Archived <day>`` inserted before its body (module docstring)."""
    _block, body, _error = split_frontmatter(text)
    head_len = len(text) - len(body)
    eol = line_ending(text)
    lines = _LINES.findall(body)
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and lines[i].startswith("# "):
        i += 1
        while i < len(lines) and not lines[i].strip():
            i += 1
    at = sum(len(line) for line in lines[:i])
    before = body[:at]
    if before and not before.endswith("\n"):
        before += eol  # a title line without its line break (nothing follows it)
    if before and not before.endswith(("\n\n", "\r\n\r\n")):
        before += eol  # one blank line between the title and the marker
    marker = f"## Archived {day.isoformat()}{eol}" + (eol if body[at:] else "")
    return text[:head_len] + before + marker + body[at:]


def plan_working(texts: dict[str, str], today: _dt.date) -> tuple[list[WorkingWrite],
                                                                  list[DecaySkipped]]:
    """The working notes of ``texts`` (path -> text) to archive, and those left alone
    because their frontmatter cannot be edited line-wise."""
    writes: list[WorkingWrite] = []
    skipped: list[DecaySkipped] = []
    for path, text in sorted(texts.items()):
        fm, _body, error = parse_frontmatter(text)
        if error is not None:
            continue
        expires = as_date(fm.get("expires"))
        status = str(fm.get("status") or "").strip().casefold()
        if expires is None or expires >= today or status not in LIVE_STATUSES:
            continue
        try:
            new = set_frontmatter_key(with_archived_marker(text, today), "status",
                                      ARCHIVED_STATUS)
        except EchoError as exc:
            skipped.append(DecaySkipped(path, f"frontmatter cannot be edited line-wise "
                                              f"({exc.message})"))
            continue
        writes.append(WorkingWrite(WorkingArchived(path, expires.isoformat()), text, new))
    return writes, skipped
