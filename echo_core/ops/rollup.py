"""``rollup``: what happened in one ISO week or calendar month, as data (seed S0's rollup
data; SPEC §6.2 ``rollup_data``). Reads only.

The result (``RollupResult``, the JSON of ``--json`` and the MCP structured content)::

    {"period": "week", "label": "2026-W09", "start": "2026-02-23", "end": "2026-03-01",
     "sessions": [{"path", "date", "title", "goal": [lines], "decisions": [lines]}],
     "decisions": [{"path", "title", "kind": "decision", "date"}],
     "created":   [{"path", "title", "kind", "date"}],   # frontmatter created in the period
     "updated":   [{"path", "title", "kind", "date"}],   # updated in it, created before
     "agent_log": [{"date", "line", "mechanical"}],      # daily notes' ## Agent Log lines
     "notes_considered": 1234, "notes_read": 17}

Sources, cheapest first: session logs are the ``_agent/sessions/<date>-...`` files of the
period (the listing ``load`` keeps, ``ops.session_logs``), read for their ``## Goal`` and
``## Decisions Made`` (a log whose name does not start with a real day, ``2026-02-30-``,
``2026-3-10-`` or none, is in no period and named in a warning); the agent log is the
period's daily notes (at most 31 reads);
entities and decisions are the notes in the kinds' folders as listed now, and any other
path the entity index holds, so a note a person made or edited by hand counts at once
(its kind and title as its text says now: ``note_entities``), with no wait for a command
that indexes it. An entity note whose file was last modified before the period began
(one day of slack for time zones) is not read: a
date in the period written into its frontmatter would have modified it since. Only the
rest is read (``notes_read``), so a rollup of this week on a large vault reads what
changed this week. A note dated in the future of its last write (a hand-typed future
``updated``) is the one case this misses. A note that cannot be read (not UTF-8) is left
out with a warning naming it, as ``lint`` and ``sweep`` do (``index_sync.read_current``).

A decision's day is its frontmatter ``date`` (the day decided,
which ``capture`` writes), else the day its file name starts with
(``decisions/YYYY-MM-DD-<slug>.md``), else its ``created``. A note of a dated kind (meeting,
decision) whose file name starts with a day of the period is read whatever its file's
time. A note read but placed nowhere for want of a date it can read is named in a
warning, one per reason, with a count and the first few paths (``Skipped``): its
frontmatter cannot be read, it gives ``created``/``updated``/``date`` more than once (the
last value is read), or it has no ``created`` or ``updated`` that is a day.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Literal

import attrs

from echo_core.actions import Action
from echo_core.agent_log_lines import is_mechanical_line
from echo_core.errors import usage_error
from echo_core.frontmatter import split_frontmatter
from echo_core.frontmatter_dates import as_date
from echo_core.models import Envelope
from echo_core.note_entities import (
    NOT_ENTITIES,
    file_stem,
    folder_kind,
    kind_folders,
    note_kind,
)
from echo_core.notes import parse_note, section_body
from echo_core.ops.daily import AGENT_LOG_HEADING, daily_note_path
from echo_core.ops.index_sync import read_current
from echo_core.ops.scope import SESSIONS_DIR
from echo_core.ops.session_logs import SessionLogsSource
from echo_core.vault_scan import file_stamps
from echo_core.yaml_bounded import duplicate_keys

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.models import Note
    from echo_core.protocols import Storage

Period = Literal["week", "month"]
SESSION_SECTIONS = ("Goal", "Decisions Made")
DECISION_KIND = "decision"
#: Notes read per ``read_many`` call.
READ_BATCH = 256
_SLACK = _dt.timedelta(days=1)
#: Paths a skip warning names before "and N more".
SHOWN_SKIPPED = 3
#: The keys whose value places a note in the period.
DATE_KEYS = ("created", "updated", "date")
_NAME_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_EXAMPLE_DAY = "2026-03-10"


class Skipped:
    """What rollup passed over, by reason; each reason is one warning with a count, the
    first ``SHOWN_SKIPPED`` paths and what to do."""

    def __init__(self) -> None:
        self.by_reason: dict[str, list[str]] = {}

    def add(self, reason: str, path: str) -> None:
        """Record ``path`` as skipped for ``reason`` (a ``_REASONS`` key)."""
        self.by_reason.setdefault(reason, []).append(path)

    def warnings(self) -> tuple[str, ...]:
        """One line per reason, in ``_REASONS`` order."""
        found = []
        for reason, (what, fix) in _REASONS.items():
            paths = sorted(set(self.by_reason.get(reason, ())))
            if not paths:
                continue
            shown = ", ".join(paths[:SHOWN_SKIPPED])
            more = f" and {len(paths) - SHOWN_SKIPPED} more" if len(paths) > SHOWN_SKIPPED else ""
            found.append(f"rollup skipped {len(paths)} {what}: "
                         f"{shown}{more}; {fix}")
        return tuple(found)


#: reason -> (what was skipped, what to do)
_REASONS = {
    "session-name": (
        ("session log(s) whose file name does not start with a real day YYYY-MM-DD (so "
         "they are in no period)"),
        f"rename each YYYY-MM-DD-HHMM-<slug>.md, e.g. {_EXAMPLE_DAY}-0930-<slug>.md"),
    "frontmatter": (
        "note(s) whose frontmatter cannot be read (so their dates are unknown)",
        "`echo-memory lint` says what to fix in each"),
    "duplicate": (
        ("note(s) that give created, updated or date more than once, one of them in the "
         "period (only the last value is read, and it is not)"),
        "keep one line per key (`echo-memory lint` lists the lines)"),
    "no-date": (
        "note(s) last modified in the period with no created or updated that is a day",
        f"write them as e.g. `created: {_EXAMPLE_DAY}`"),
}


@attrs.frozen
class RollupSession:
    """A session logged in the period: its log, day, title and summary lines."""

    path: str
    date: str
    title: str
    goal: tuple[str, ...]
    decisions: tuple[str, ...]


@attrs.frozen
class RollupNote:
    """A note of the period: a decision (``date``: its date), or an entity created or
    updated (``date``: that day)."""

    path: str
    title: str
    kind: str
    date: str


@attrs.frozen
class AgentLogLine:
    """One line of a daily note's ``## Agent Log``; ``mechanical``: capture's or
    session-end's own record of a write (``agent_log_lines``)."""

    date: str
    line: str
    mechanical: bool


@attrs.frozen
class RollupResult:
    """What happened from ``start`` to ``end`` (module docstring)."""

    period: str
    label: str
    start: str
    end: str
    sessions: tuple[RollupSession, ...]
    decisions: tuple[RollupNote, ...]
    created: tuple[RollupNote, ...]
    updated: tuple[RollupNote, ...]
    agent_log: tuple[AgentLogLine, ...]
    notes_considered: int
    notes_read: int


def period_bounds(period: Period, day: _dt.date) -> tuple[_dt.date, _dt.date, str]:
    """``(first day, last day, label)`` of the ISO week (Monday to Sunday, ``2026-W09``)
    or calendar month (``2026-03``) holding ``day``. Errors: 2 for another period, and 2
    naming ``date`` for a week running past 9999-12-31 (the last day a date can be)."""
    if period == "week":
        start = day - _dt.timedelta(days=day.weekday())
        year, week, _ = day.isocalendar()
        if (_dt.date.max - start).days < 6:
            raise usage_error(f"date: {day.isoformat()!r} is in a week that ends after "
                              f"{_dt.date.max.isoformat()}, the last day a date can be; give "
                              f"a day up to {(start - _dt.timedelta(days=1)).isoformat()}")
        return start, start + _dt.timedelta(days=6), f"{year:04d}-W{week:02d}"
    if period == "month":
        last = calendar.monthrange(day.year, day.month)[1]
        return day.replace(day=1), day.replace(day=last), f"{day.year:04d}-{day.month:02d}"
    raise usage_error(f"period: {period!r} is not one of week, month")


def parse_day(value: str | None, today: _dt.date) -> _dt.date:
    """The day ``value`` names: ``YYYY-MM-DD``, or a date and time (``2026-03-10T10:00``,
    ``2026-03-10 10:00+01:00``) taken as the day written in it; ``today`` when blank.
    Errors: 2 naming ``date``, with the form and an example."""
    if value is None or not value.strip():
        return today
    text = value.strip()
    try:
        return _dt.date.fromisoformat(text)
    except ValueError:
        pass
    try:
        return _dt.datetime.fromisoformat(text).date()
    except ValueError:
        pass
    shown = repr(text if len(text) <= 40 else text[:37] + "...")
    unreal = _NAME_DAY.fullmatch(text) is not None  # 2026-02-30: the form, not a day
    raise usage_error(f"date: {shown} is not {'a real day' if unreal else 'a day'}; give "
                      f"YYYY-MM-DD, e.g. --date {today.isoformat()} (a date and time such as "
                      f"{today.isoformat()}T10:00 counts as its day)")


def name_day(path: str) -> _dt.date | None:
    """The day a file name starts with (``2026-03-10-0930-x.md``); None when it does not
    start with a real ``YYYY-MM-DD``."""
    head = path.rsplit("/", 1)[-1][:10]
    if not _NAME_DAY.fullmatch(head):
        return None
    try:
        return _dt.date.fromisoformat(head)
    except ValueError:
        return None


def _texts(ctx: EchoContext, paths: Sequence[str], unreadable: list[str]
           ) -> Iterator[tuple[str, str]]:
    """``(path, text)`` of each path that is there, in batches; a path that cannot be
    read (not UTF-8) is added to ``unreadable`` instead."""
    for at in range(0, len(paths), READ_BATCH):
        texts, bad = read_current(ctx, paths[at:at + READ_BATCH])
        unreadable += bad
        for path, text in texts.items():
            if text is not None:
                yield path, text


def _lines(body: str | None) -> tuple[str, ...]:
    return tuple(line.rstrip() for line in (body or "").splitlines() if line.strip())


def _sessions(ctx: EchoContext, start: _dt.date, end: _dt.date, unreadable: list[str],
              skipped: Skipped) -> tuple[RollupSession, ...]:
    source = SessionLogsSource(ctx)
    wanted: list[tuple[str, str]] = []
    for path in source.list(SESSIONS_DIR):
        if not path.endswith(".md") or path.rsplit("/", 1)[-1].casefold() in NOT_ENTITIES:
            continue
        day = name_day(path)
        if day is None:
            skipped.add("session-name", path)
        elif start <= day <= end:
            wanted.append((path, day.isoformat()))
    days = dict(wanted)
    found = []
    for path, text in _texts(ctx, sorted(days), unreadable):
        note = parse_note(path, text)
        goal, decisions = (_lines(section_body(text, h)) for h in SESSION_SECTIONS)
        found.append(RollupSession(path, days[path], note.title, goal, decisions))
    return tuple(sorted(found, key=lambda s: (s.date, s.path)))


def _agent_log(ctx: EchoContext, start: _dt.date, end: _dt.date, unreadable: list[str]
               ) -> tuple[AgentLogLine, ...]:
    days = [start + _dt.timedelta(days=n) for n in range((end - start).days + 1)]
    paths = {daily_note_path(day): day.isoformat() for day in days}
    found: list[AgentLogLine] = []
    for path, text in _texts(ctx, sorted(paths), unreadable):
        for line in _lines(section_body(text, AGENT_LOG_HEADING)):
            found.append(AgentLogLine(paths[path], line, is_mechanical_line(line)))
    return tuple(found)


def read_since(start: _dt.date) -> _dt.date:
    """The day from which a note's file must have been modified to be read: ``start``
    less a day (no earlier than 0001-01-01)."""
    return start - min(_SLACK, start - _dt.date.min)


def _day_ns(day: _dt.date) -> int:
    return int(_dt.datetime.combine(day, _dt.time.min, _dt.UTC).timestamp() * 1_000_000_000)


def _touched_since(storage: Storage, paths: Sequence[str], start: _dt.date) -> dict[str, int]:
    """path -> mtime_ns of the paths whose file was modified on or after
    ``read_since(start)`` (all of them when the backend has no modification times)."""
    since_ns = _day_ns(read_since(start))
    stamps = file_stamps(storage, paths)
    return {p: stamp[1] for p in paths
            if (stamp := stamps.get(p)) is not None and stamp[1] >= since_ns}


@attrs.frozen
class _Entities:
    decisions: tuple[RollupNote, ...]
    created: tuple[RollupNote, ...]
    updated: tuple[RollupNote, ...]
    considered: int
    read: int


def _entity_paths(ctx: EchoContext, folders: dict[str, str]) -> list[str]:
    """Every entity note: each note listed now in a kind's folder (``folders``: folder ->
    kind), a note a person made by hand and one the index dropped or never took (not
    UTF-8) included, and every path of the entity index (one gone has no stamp later)."""
    storage = ctx.vault.storage
    tops = [f for f in folders if not any(f.startswith(o + "/") for o in folders)]
    listed = {p for top in tops for p in storage.list(top) if folder_kind(p, folders)}
    return sorted(listed | ctx.entity_names.all_paths())


def _dated_in(paths: Sequence[str], folders: dict[str, str], dated: set[str],
              start: _dt.date, end: _dt.date) -> set[str]:
    """The notes of a dated kind whose file name starts with a day from start to end."""
    return {p for p in paths if folder_kind(p, folders) in dated
            and (day := name_day(p)) is not None and start <= day <= end}


def _repeated_in(note: Note, start: _dt.date, end: _dt.date) -> bool:
    """Whether the frontmatter gives a date key more than once with a value (not the last,
    which was read) from start to end."""
    block = split_frontmatter(note.text)[0] or ""
    lines = block.splitlines()
    for key, at in duplicate_keys(block).items():
        if key not in DATE_KEYS:
            continue
        for number in at:  # line 1 is the opening ---
            value = lines[number - 2].partition(":")[2].strip().strip("'\"")
            if (day := as_date(value)) is not None and start <= day <= end:
                return True
    return False


def _why_unplaced(note: Note, start: _dt.date, end: _dt.date, in_period: bool) -> str | None:
    """Why a note read but placed nowhere may belong in the period (a ``_REASONS`` key),
    or None when its dates are readable and simply outside it. ``in_period``: its file
    was last modified in the period (a note with no date is only warned about then)."""
    fm = note.frontmatter
    if note.frontmatter_error is not None:
        return "frontmatter"
    if _repeated_in(note, start, end):
        return "duplicate"
    if in_period and as_date(fm.get("created")) is None and as_date(fm.get("updated")) is None:
        return "no-date"
    return None


def _entities(ctx: EchoContext, start: _dt.date, end: _dt.date, unreadable: list[str],
              skipped: Skipped) -> _Entities:
    folders = kind_folders(ctx.manifest)
    dated = {k for k, route in ctx.manifest.kinds.items() if route.dated}
    paths = _entity_paths(ctx, folders)
    touched = _touched_since(ctx.vault.storage, paths, start)
    candidates = sorted({*touched, *_dated_in(paths, folders, dated, start, end)})
    after_ns = _day_ns(min(end, _dt.date.max - 2 * _SLACK) + 2 * _SLACK)  # end + its slack
    known = ctx.entity_names.by_paths(candidates)
    decisions: list[RollupNote] = []
    created: list[RollupNote] = []
    updated: list[RollupNote] = []
    for path, text in _texts(ctx, candidates, unreadable):
        note = parse_note(path, text)
        fm = note.frontmatter
        entity = known.get(path)
        if entity is None and note_kind(note, folders, ctx.manifest) is None:
            continue  # not an entity (a part of an ingested document)
        kind = str(fm.get("type") or folder_kind(path, folders)
                   or (entity.kind if entity else ""))
        title = note.title.strip() or file_stem(path)  # as the index derives it
        made, changed = as_date(fm.get("created")), as_date(fm.get("updated"))
        placed = False
        if kind == DECISION_KIND:  # its `date`, else its name's day, else `created`
            when = as_date(fm.get("date")) or name_day(path) or made
            if when is not None and start <= when <= end:
                decisions.append(RollupNote(path, title, kind, when.isoformat()))
                placed = True
        if made is not None and start <= made <= end:
            created.append(RollupNote(path, title, kind, made.isoformat()))
        elif changed is not None and start <= changed <= end:
            updated.append(RollupNote(path, title, kind, changed.isoformat()))
        elif not placed and (reason := _why_unplaced(
                note, start, end, touched.get(path, 0) < after_ns)) is not None:
            skipped.add(reason, path)
        if note.frontmatter_error is not None and placed:
            skipped.add("frontmatter", path)  # a decision placed by its name only

    def order(notes: list[RollupNote]) -> tuple[RollupNote, ...]:
        return tuple(sorted(notes, key=lambda n: (n.date, n.path)))

    # read: every note looked at, one not UTF-8 included (only the others are not read)
    return _Entities(order(decisions), order(created), order(updated), len(paths),
                     len(candidates))


def rollup(ctx: EchoContext, period: Period = "week", date: str | None = None
           ) -> Envelope[RollupResult]:
    """What happened in the ``period`` (``week``: the ISO week, ``month``: the calendar
    month) holding ``date`` (YYYY-MM-DD, or a date and time taken as its day; default
    today). Reads only; see the module docstring for the result and what is read; a note
    that cannot be read, or is read but cannot be placed, is left out with a warning
    naming it. Errors: 2 naming ``period`` or ``date`` (with an example; also a week that
    runs past 9999-12-31)."""
    day = parse_day(date, ctx.today())
    start, end, label = period_bounds(period, day)
    unreadable: list[str] = []
    skipped = Skipped()
    sessions = _sessions(ctx, start, end, unreadable, skipped)
    entities = _entities(ctx, start, end, unreadable, skipped)
    log = _agent_log(ctx, start, end, unreadable)
    result = RollupResult(period, label, start.isoformat(), end.isoformat(), sessions,
                          entities.decisions, entities.created, entities.updated, log,
                          entities.considered, entities.read)
    message = (f"{period} {label} ({start.isoformat()} .. {end.isoformat()}): "
               f"{len(sessions)} session(s), {len(entities.decisions)} decision(s), "
               f"{len(entities.created)} created, {len(entities.updated)} updated, "
               f"{len(log)} agent-log line(s)")
    warnings = (*(f"{p} is not UTF-8 text; rollup skipped it" for p in dict.fromkeys(unreadable)),
                *skipped.warnings())
    return Envelope(True, Action.READ, message, result, warnings)
