"""``rollup`` (the MCP ``echo_rollup_data``), declared once (SPEC §6.2)."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from typing import Any, Literal

import attrs

from echo_core.models import Envelope
from echo_core.operations import CliParam, CliSurface, McpSurface, Operation, lazy_type, param

_SHOWN = 50
#: A list marker a session's Goal or Decisions Made line starts with (``- `` ``* `` ``+ ``).
_BULLET = re.compile(r"[-*+][ \t]+")


@attrs.frozen(kw_only=True)
class RollupParams:
    """What ``rollup`` / ``echo_rollup_data`` take."""

    period: Literal["week", "month"] = param(
        "week", help="week (the ISO week, Monday to Sunday) or month (the calendar month).")
    date: str | None = param(
        None, help=("Any day of the period, YYYY-MM-DD, e.g. 2026-03-10 (default today); a "
                    "date and time such as 2026-03-10T10:00 counts as its day."),
        cli=CliParam(metavar="YYYY-MM-DD"))


def _section(title: str, items: Sequence[Sequence[str]], noun: str = "") -> list[str]:
    """``title (n):`` and the lines of each item, indented (``n``: the number of items,
    not of lines). Whole items are shown while their lines stay within ``_SHOWN`` (the
    first always), then how many items (``noun``) were left out."""
    if not items:
        return [f"{title}: none"]
    shown: list[str] = []
    count = 0
    for item in items:
        if shown and len(shown) + len(item) > _SHOWN:
            break
        shown += [f"  {line}" for line in item]
        count += 1
    if count < len(items):
        shown.append(f"  ... and {len(items) - count} more{noun and ' ' + noun} (see --json)")
    return [f"{title} ({len(items)}):", *shown]


def _item(line: str) -> str:
    """A session's line without its list marker (``- decided X`` -> ``decided X``)."""
    return _BULLET.sub("", line, count=1) if _BULLET.match(line) else line


def render_rollup(env: Envelope[Any]) -> str:
    """Sessions with their goals and decisions, decisions, created and updated notes, and
    the agent log (capture's own lines summed up in one line). Each list shows about
    ``_SHOWN`` lines, cut between its items (a session with its goal and decisions is
    one item), and says how many it left out. A last line says how many notes were not
    read for their file's time (``notes_considered`` - ``notes_read``)."""
    data = env.data
    lines = [f"Rollup {data.label} ({data.start} .. {data.end})"]
    sessions = [[f"{s.date}  {s.title}  ({s.path})",
                 *(f"    goal: {_item(line)}" for line in s.goal),
                 *(f"    decided: {_item(line)}" for line in s.decisions)]
                for s in data.sessions]
    lines += _section("Sessions", sessions, "session(s)")
    for title, notes in (("Decisions", data.decisions), ("Created", data.created),
                         ("Updated", data.updated)):
        lines += _section(title, [[f"{n.date}  {n.title}  ({n.kind}, {n.path})"]
                                  for n in notes])
    written = [a for a in data.agent_log if a.mechanical]
    own = [[f"{a.date}  {a.line}"] for a in data.agent_log if not a.mechanical]
    lines += _section("Agent log", own)
    if written:
        lines.append(f"  (+ {len(written)} line(s) recording captures and sessions)")
    unread = data.notes_considered - data.notes_read
    if unread > 0:
        since = _dt.date.fromisoformat(data.start) - _dt.timedelta(days=1)
        lines.append(f"Not read: {unread} of {data.notes_considered} notes, whose files were "
                     f"last modified before {since.isoformat()}; a note copied with an older "
                     "file time (cp -p, an unzipped backup) is among them: `touch` it to "
                     "count it.")
    return "\n".join(lines)


def run_rollup(ctx: Any, p: RollupParams) -> Envelope[Any]:
    """``ops.rollup.rollup``."""
    from echo_core.ops.rollup import rollup

    return rollup(ctx, p.period, p.date)


ROLLUP = Operation(
    "rollup", "Sum up a week or month: sessions, decisions, notes created and updated, log.",
    ("Sum up one ISO week or calendar month of memory: sessions logged (goal and decisions "
     "made), decision notes, notes created and updated, and the daily agent-log lines. Use "
     "it to write a weekly or monthly review. Returns those lists as data and reads only."),
    RollupParams, run_rollup, lazy_type("echo_core.ops.rollup", "RollupResult"),
    render=render_rollup, mcp=McpSurface(tool="echo_rollup_data"),
    cli=CliSurface(help="""Sum up a week or month: sessions, decisions, notes created and updated, log.

\b
Examples:
  echo-memory rollup                                # this ISO week
  echo-memory rollup --period month --date 2026-02-10 --json

A week is the ISO week (Monday to Sunday) holding --date (YYYY-MM-DD; a date and
time counts as its day), a month its calendar month. Sessions are the logs in
_agent/sessions/ whose file name starts with a day in it (with their Goal and
Decisions Made lines). Decisions are decision notes dated in it: a decision's day
is its frontmatter `date` (the day decided), else the day its file name starts
with (decisions/YYYY-MM-DD-<slug>.md), else its `created`. Created/updated are
entity notes whose frontmatter `created` / `updated` falls in it; the agent log
is the ## Agent Log lines of its daily notes. Notes a person made or edited in
the vault by hand count at once. Reads only.

Notes whose files were not modified since the day before the period began are
not read (the last line says how many; --json notes_read): a note copied with an
older file time (cp -p, an unzipped backup) is missed until you `touch` it, except
a meeting or decision whose file name starts with a day of the period. Anything
else skipped is named in a warning (a count and the first paths): a note that is
not UTF-8, a session log whose name does not start with a real day, a note whose
frontmatter cannot be read or gives a date key twice, and a note modified in the
period with no `created` or `updated` date."""),
    # the indexes catch up with hand edits first, as for recall; the op itself lists the
    # kinds' folders, so a note the catch-up drops (not UTF-8) is still warned about
    fresh="quick",
)
