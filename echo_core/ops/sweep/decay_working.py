"""Expired working notes -> ``status: archived``, body kept under ``## Archived`` (SPEC §2.7).

A working note (every note in the ``working`` kind's folder, PreCompact checkpoints
included: they are captured as kind ``working`` and carry ``expires``) is archived when
its ``expires`` date is before today and its ``status`` is still ``active`` (or
``expired``, the mark ``lint --fix`` left before it archived as decay does; such a note
is archived like an active one) (``archive_due``). Archiving (``archived_text``, which
``lint --fix`` applies too, so both verbs leave the same bytes) changes two things and
keeps every other byte:

* the frontmatter line ``status`` becomes ``status: archived`` (one line);
* a line ``## Archived YYYY-MM-DD`` (today) and one blank line are inserted before the
  body: after the ``# Title`` line when the body opens with one (the title stays the
  note's first heading), else at the body's start. Everything from the body's first
  non-blank line after the title to the end is kept byte for byte below the marker. A
  blank line separates the title and the marker.

A blank or missing ``status`` counts as the working kind's manifest status (``active``),
which the full sweep that follows decay would backfill: one ``--apply`` archives such a
note (``status: archived`` set), never a backfill now and the archive next run.

A note already archived (any other status) is not touched again: a second run does
nothing. A note without ``expires`` is left alone. A note decay cannot decide on is left
alone and reported as skipped (``DecaySkipped``): an ``expires`` that is not a date
(``2024-02-30``, ``02/01/2024``, a list) while the status is live or unreadable, and a
``status`` that is not one word (a list) once ``expires`` has passed
(``unreadable_lifecycle``; lint reports them too).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from typing import Any

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


@attrs.frozen
class UnreadableKey:
    """A lifecycle key of a working note that decay cannot read: the key, its value as
    the frontmatter holds it, what is wrong and the fix."""

    key: str
    value: Any
    problem: str
    fix: str

    def says(self) -> str:
        """The problem in one line, naming the key and its value."""
        return f"{self.key}: {self.value!r} {self.problem}"


def unreadable_lifecycle(fm: Mapping[str, Any]) -> tuple[UnreadableKey, ...]:
    """The keys of the working note frontmatter ``fm`` that decay cannot read: an
    ``expires`` set but not a date (``frontmatter_dates.as_date``), a ``status`` set but
    not one word (a list, a mapping, a number). Empty when both can be read or are
    blank. Pure."""
    found: list[UnreadableKey] = []
    expires = fm.get("expires")
    if expires not in (None, "") and as_date(expires) is None:
        found.append(UnreadableKey(
            "expires", expires, "is not a date, so sweep --decay never archives the note",
            "write one date as YYYY-MM-DD, e.g. expires: 2026-03-15"))
    status = fm.get("status")
    if status is not None and not isinstance(status, str):
        found.append(UnreadableKey(
            "status", status, "is not one word, so sweep --decay never archives the note",
            "write one status, e.g. status: active"))
    return tuple(found)


def _status(value: Any, default: str) -> str | None:
    """A ``status`` value case-folded, ``default`` when blank, None when not a word."""
    if value is not None and not isinstance(value, str):
        return None
    return (value or "").strip().casefold() or default


def archive_due(fm: Mapping[str, Any], today: _dt.date,
                default_status: str = "active") -> _dt.date | None:
    """The ``expires`` date of the working note frontmatter ``fm`` when decay archives
    it (module docstring: past, status live or blank), else None. Pure."""
    expires = as_date(fm.get("expires"))
    if expires is None or expires >= today:
        return None
    return expires if _status(fm.get("status"), default_status) in LIVE_STATUSES else None


def archived_text(text: str, today: _dt.date) -> str:
    """``text`` archived on ``today``: ``status: archived`` and the body under the
    ``## Archived`` marker (module docstring). Raises as ``set_frontmatter_key`` does
    for frontmatter it cannot edit line-wise."""
    return set_frontmatter_key(with_archived_marker(text, today), "status", ARCHIVED_STATUS)


def plan_working(texts: dict[str, str], today: _dt.date, default_status: str = "active",
                 ) -> tuple[list[WorkingWrite], list[DecaySkipped]]:
    """The working notes of ``texts`` (path -> text) to archive, and those left alone
    and reported: frontmatter that cannot be edited line-wise, or a lifecycle key decay
    cannot read (module docstring). ``default_status``: the working kind's manifest
    status, what a blank or missing ``status`` counts as."""
    writes: list[WorkingWrite] = []
    skipped: list[DecaySkipped] = []
    for path, text in sorted(texts.items()):
        fm, _body, error = parse_frontmatter(text)
        if error is not None:
            continue
        expires = as_date(fm.get("expires"))
        status = _status(fm.get("status"), default_status)
        unreadable = unreadable_lifecycle(fm)
        if unreadable and (status is None or status in LIVE_STATUSES) and (
                expires is None or expires < today):
            skipped.append(DecaySkipped(path, "; ".join(f"{u.says()} ({u.fix})"
                                                        for u in unreadable)))
            continue
        if expires is None or archive_due(fm, today, default_status) is None:
            continue
        try:
            new = archived_text(text, today)
        except EchoError as exc:
            skipped.append(DecaySkipped(path, f"frontmatter cannot be edited line-wise "
                                              f"({exc.message})"))
            continue
        writes.append(WorkingWrite(WorkingArchived(path, expires.isoformat()), text, new))
    return writes, skipped
