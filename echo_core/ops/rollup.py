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
``## Decisions Made``; the agent log is the period's daily notes (at most 31 reads);
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
"""

from __future__ import annotations

import calendar
import datetime as _dt
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Literal

import attrs

from echo_core.actions import Action
from echo_core.agent_log_lines import is_mechanical_line
from echo_core.errors import usage_error
from echo_core.frontmatter_dates import as_date
from echo_core.models import Envelope
from echo_core.note_entities import file_stem, folder_kind, kind_folders, note_kind
from echo_core.notes import parse_note, section_body
from echo_core.ops.daily import AGENT_LOG_HEADING, daily_note_path
from echo_core.ops.index_sync import read_current
from echo_core.ops.scope import SESSIONS_DIR
from echo_core.ops.session_logs import SessionLogsSource
from echo_core.vault_scan import file_stamps

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.protocols import Storage

Period = Literal["week", "month"]
SESSION_SECTIONS = ("Goal", "Decisions Made")
DECISION_KIND = "decision"
#: Notes read per ``read_many`` call.
READ_BATCH = 256
_SLACK = _dt.timedelta(days=1)


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


def _day(value: str | None, today: _dt.date) -> _dt.date:
    if value is None or not value.strip():
        return today
    try:
        return _dt.date.fromisoformat(value.strip())
    except ValueError:
        raise usage_error(f"date: {value!r} is not an ISO date; give YYYY-MM-DD, e.g. "
                          f"{today.isoformat()}") from None


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


def _sessions(ctx: EchoContext, start: _dt.date, end: _dt.date, unreadable: list[str]
              ) -> tuple[RollupSession, ...]:
    source = SessionLogsSource(ctx)
    wanted: list[tuple[str, str]] = []
    for path in source.list(SESSIONS_DIR):
        day = as_date(path.rsplit("/", 1)[-1][:10])
        if path.endswith(".md") and day is not None and start <= day <= end:
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


def _touched_since(storage: Storage, paths: Sequence[str], start: _dt.date) -> list[str]:
    """The paths whose file was modified on or after ``start`` less a day (no earlier
    than 0001-01-01; all of them when the backend has no modification times)."""
    slack = min(_SLACK, start - _dt.date.min)
    since = _dt.datetime.combine(start - slack, _dt.time.min, _dt.UTC).timestamp()
    since_ns = int(since * 1_000_000_000)
    stamps = file_stamps(storage, paths)
    return [p for p in paths if (stamp := stamps.get(p)) is not None and stamp[1] >= since_ns]


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


def _entities(ctx: EchoContext, start: _dt.date, end: _dt.date, unreadable: list[str]
              ) -> _Entities:
    folders = kind_folders(ctx.manifest)
    paths = _entity_paths(ctx, folders)
    candidates = _touched_since(ctx.vault.storage, paths, start)
    known = ctx.entity_names.by_paths(candidates)
    decisions: list[RollupNote] = []
    created: list[RollupNote] = []
    updated: list[RollupNote] = []
    read = 0
    for path, text in _texts(ctx, candidates, unreadable):
        read += 1
        note = parse_note(path, text)
        fm = note.frontmatter
        entity = known.get(path)
        if entity is None and note_kind(note, folders, ctx.manifest) is None:
            continue  # not an entity (a part of an ingested document)
        kind = str(fm.get("type") or folder_kind(path, folders)
                   or (entity.kind if entity else ""))
        title = note.title.strip() or file_stem(path)  # as the index derives it
        made, changed = as_date(fm.get("created")), as_date(fm.get("updated"))
        if kind == DECISION_KIND:
            when = as_date(fm.get("date")) or made
            if when is not None and start <= when <= end:
                decisions.append(RollupNote(path, title, kind, when.isoformat()))
        if made is not None and start <= made <= end:
            created.append(RollupNote(path, title, kind, made.isoformat()))
        elif changed is not None and start <= changed <= end:
            updated.append(RollupNote(path, title, kind, changed.isoformat()))

    def order(notes: list[RollupNote]) -> tuple[RollupNote, ...]:
        return tuple(sorted(notes, key=lambda n: (n.date, n.path)))

    return _Entities(order(decisions), order(created), order(updated), len(paths), read)


def rollup(ctx: EchoContext, period: Period = "week", date: str | None = None
           ) -> Envelope[RollupResult]:
    """What happened in the ``period`` (``week``: the ISO week, ``month``: the calendar
    month) holding ``date`` (YYYY-MM-DD; default today). Reads only; see the module
    docstring for the result and what is read; a note that cannot be read is left out, with
    a warning naming it. Errors: 2 naming ``period`` or ``date`` (also a week that runs
    past 9999-12-31)."""
    day = _day(date, ctx.today())
    start, end, label = period_bounds(period, day)
    unreadable: list[str] = []
    sessions = _sessions(ctx, start, end, unreadable)
    entities = _entities(ctx, start, end, unreadable)
    log = _agent_log(ctx, start, end, unreadable)
    result = RollupResult(period, label, start.isoformat(), end.isoformat(), sessions,
                          entities.decisions, entities.created, entities.updated, log,
                          entities.considered, entities.read)
    message = (f"{period} {label} ({start.isoformat()} .. {end.isoformat()}): "
               f"{len(sessions)} session(s), {len(entities.decisions)} decision(s), "
               f"{len(entities.created)} created, {len(entities.updated)} updated, "
               f"{len(log)} agent-log line(s)")
    warnings = tuple(f"{p} is not UTF-8 text; rollup skipped it" for p in dict.fromkeys(unreadable))
    return Envelope(True, Action.READ, message, result, warnings)
