"""``scope show`` / ``scope set`` (SPEC §4.2): what the agent is working on now.

The scope lives in ``_agent/context/current-context.md`` under ``## Scope``; setting it
moves the prior scope, dated, to the top of ``## Scope History`` and stamps
``scope_updated`` with the time it was set (``YYYY-MM-DDTHH:MM:SS``; older vaults and
``init`` hold a date only).

"Sessions logged since" counts the session logs made after that moment: a log is a file
whose name starts with a valid date, its time is the ``<date>-<HHMM>`` of its name (the
start of its day without a valid ``HHMM``), and it counts when its minute is later than
the minute the scope was set (so the session whose ``session-end`` set the scope, and
every session before it on that day, do not). Against a date-only stamp the time of day
is unknown: sessions of that day and later count. A stamp's UTC offset is ignored.
"""

from __future__ import annotations

import datetime as _dt
import operator
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.edit_retry import planned_again_if_edited
from echo_core.errors import usage_error
from echo_core.frontmatter import set_frontmatter_key
from echo_core.lazy_pattern import LazyPattern
from echo_core.models import Envelope
from echo_core.notes import parse_note, replace_section_body, section_body
from echo_core.write_scope import require_plain_line

if TYPE_CHECKING:
    from echo_core.context import EchoContext

CONTEXT_PATH = "_agent/context/current-context.md"
SESSIONS_DIR = "_agent/sessions"
PLACEHOLDER = "(no scope set yet)"
MAX_SCOPE = 2000


@attrs.frozen
class ScopeResult:
    """The scope as it stands (after a set, the new one)."""

    scope: str
    scope_updated: str
    sessions_since: int
    previous: str | None = None
    changed: bool = False


def count_sessions_since(paths: Iterable[str], scope_updated: str) -> int:
    """How many of the session logs ``paths`` were made after ``scope_updated`` (see the
    module docstring): "" counts every log; a date only counts logs of that day and
    later; a timestamp counts logs of a later minute."""
    return tally_sessions(paths, scope_updated)[1]


def count_logged(paths: Iterable[str]) -> int:
    """How many of ``paths`` are session logs (a name starting with a valid date)."""
    return tally_sessions(paths, "")[0]


def tally_sessions(paths: Iterable[str], scope_updated: str) -> tuple[int, int]:
    """``(logged, since)``: how many of ``paths`` are session logs (``session_date``), and
    how many of those ``count_sessions_since`` counts. The names' days are counted in C
    (``Counter`` over ``map``: ~2-3 ms for 20k logs where a loop in Python took ~9 ms
    of a cold SessionStart hook), each distinct day parsed once; only the logs of the
    stamp's own day are read one by one, for their minute."""
    stamp = scope_updated.strip().replace(" ", "T")
    try:
        since = _dt.datetime.fromisoformat(stamp) if stamp else None
    except ValueError:
        since = None  # unreadable stamp: count every log rather than hide them
    since_day = since.date().isoformat() if since is not None else ""
    # a log of ``since_day`` counts when its minute is later (exact) or always (a date)
    since_minute = since.hour * 60 + since.minute if since is not None and "T" in stamp else -1
    listed = paths if isinstance(paths, (list, tuple)) else tuple(paths)
    cut = _name_start(listed)
    heads = (map(operator.itemgetter(slice(cut, cut + 10)), listed) if cut is not None
             else (path[path.rfind("/") + 1:][:10] for path in listed))
    logged = later = 0
    for head, count in Counter(heads).items():
        day = _iso_day(head)
        if day is None:
            continue
        logged += count
        if day > since_day or (day == since_day and since_minute < 0):
            later += count
        elif day == since_day:
            later += sum(1 for path in listed if head in path
                         and (name := path[path.rfind("/") + 1:]).startswith(head)
                         and _minute_of(name) > since_minute)
    return logged, later


def _name_start(paths: Sequence[str]) -> int | None:
    """Where every path's file name starts, when that is the same place for all (one
    folder: the usual case); None otherwise."""
    cuts = set(map(operator.methodcaller("rfind", "/"), paths))
    return cuts.pop() + 1 if len(cuts) == 1 else None


def _iso_day(head: str) -> str | None:
    try:
        return _dt.date.fromisoformat(head).isoformat()
    except ValueError:
        return None


def _minute_of(name: str) -> int:
    """The minute of the day a log's name gives (``<date>-<HHMM>``; 0 without one)."""
    clock = name[10:15]
    if len(clock) == 5 and clock[0] == "-" and clock[1:].isdigit():
        hour, minute = int(clock[1:3]), int(clock[3:5])
        if hour < 24 and minute < 60:
            return hour * 60 + minute
    return 0


def sessions_since(ctx: EchoContext, scope_updated: str) -> int:
    """How many session logs were made after ``scope_updated`` (``count_sessions_since``)."""
    return count_sessions_since(ctx.vault.storage.list(SESSIONS_DIR), scope_updated)


def shown_stamp(scope_updated: str) -> str:
    """``scope_updated`` for people: ``2026-03-01 14:30`` (a date stays a date)."""
    stamp = scope_updated.strip()
    if "T" in stamp or " " in stamp:
        return stamp.replace("T", " ")[:16]
    return stamp


def count_phrase(n: int, noun: str) -> str:
    """``1 session``, ``2 sessions``: a count with its noun in the right number."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _read_context(ctx: EchoContext) -> str:
    if ctx.vault.storage.exists(CONTEXT_PATH):
        return ctx.vault.storage.read(CONTEXT_PATH)
    today = ctx.today().isoformat()
    return (f"---\ntype: context\nscope_updated: {today}\n---\n# Current Context\n\n"
            f"## Scope\n\n{PLACEHOLDER}\n\n## Scope History\n")


def read_scope(ctx: EchoContext, text: str | None = None) -> ScopeResult:
    """The current scope, its date and the number of sessions logged since."""
    text = _read_context(ctx) if text is None else text
    note = parse_note(CONTEXT_PATH, text)
    scope = section_body(text, "Scope") or ""
    updated = str(note.frontmatter.get("scope_updated") or "")
    return ScopeResult(scope=scope, scope_updated=updated,
                       sessions_since=sessions_since(ctx, updated))


def show_scope(ctx: EchoContext) -> Envelope[ScopeResult]:
    """The scope, ``scope_updated`` and sessions logged since."""
    result = read_scope(ctx)
    shown = result.scope if result.scope and result.scope != PLACEHOLDER else "(none)"
    message = (f"scope: {shown}\nupdated {shown_stamp(result.scope_updated) or 'never'}; "
               f"{count_phrase(result.sessions_since, 'session')} logged since")
    return Envelope(True, Action.SCOPE, message, result)


#: A markdown heading line (what would end the ## Scope section it is written into).
_HEADING = LazyPattern(r"[ ]{0,3}#{1,6}(?:[ \t]|$)")


def _history_line(day: str, scope: str) -> str:
    return f"- {day}: " + " / ".join(line.strip() for line in scope.splitlines() if line.strip())


def _scope_written(ctx: EchoContext, scope: str
                   ) -> ScopeResult | tuple[ScopeResult, _dt.datetime]:
    """Write ``scope`` into the context note, written only while the note holds the text
    read (``Vault.update_note``: a person's save meanwhile raises ``EditedMeanwhile``,
    nothing written); the scope before and the stamp, or the current scope when it is
    already ``scope``."""
    prior = ctx.vault.text_or_none(CONTEXT_PATH)
    text = _read_context(ctx) if prior is None else prior
    before = read_scope(ctx, text)
    if before.scope == scope:
        return before
    day = ctx.today()
    stamp = _dt.datetime.combine(day, ctx.now().time().replace(microsecond=0))
    today = day.isoformat()
    if before.scope and before.scope != PLACEHOLDER:
        history = section_body(text, "Scope History") or ""
        entry = _history_line(before.scope_updated[:10] or today, before.scope)
        text = replace_section_body(text, "Scope History",
                                    entry + ("\n" + history if history else ""))
    text = replace_section_body(text, "Scope", scope)
    text = set_frontmatter_key(text, "scope_updated", stamp)
    ctx.vault.update_note(CONTEXT_PATH, text, prior)
    return before, stamp


#: A setext underline: a line of ``=`` or ``-`` only, which makes the line above it a
#: heading in CommonMark (and in Obsidian).
_UNDERLINE = LazyPattern(r"[ ]{0,3}(?:=+|-+)[ \t]*$")


def clean_scope(scope: str) -> str:
    """``scope`` as the context note's ``## Scope`` section will hold it (line breaks as
    LF, a lone CR being one too, surrounding blanks stripped), or ``EchoError`` (2): empty,
    over ``MAX_SCOPE`` characters, holding a control character other than a tab or line
    break (a NUL, an ESC: ``require_plain_line``), or a line a markdown reader takes for a heading
    (``# ...``, or a ``===`` / ``---`` line under a line of text), which would end the
    section. ``set_scope`` and a session-end bundle check it the same way, before any
    write."""
    scope = scope.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not scope:
        raise usage_error("scope: give the new scope text")
    if len(scope) > MAX_SCOPE:
        raise usage_error(f"scope: {len(scope)} characters; keep it under {MAX_SCOPE}")
    lines = scope.split("\n")
    for number, line in enumerate(lines, start=1):
        require_plain_line(line, "scope")
        underline = number > 1 and lines[number - 2].strip() and _UNDERLINE.match(line)
        if _HEADING.match(line) or underline:
            raise usage_error(f"scope: line {number} makes a markdown heading "
                              f"({line.strip()!r}); the scope is the text of the context "
                              "note's ## Scope section, so a heading would end it: write it "
                              "without one")
    return scope


def set_scope(ctx: EchoContext, scope: str) -> Envelope[ScopeResult]:
    """Replace the scope; the prior one goes (dated by its ``scope_updated``) to the top
    of Scope History. The same scope again changes nothing. Errors: 2 for a scope
    ``clean_scope`` refuses."""
    scope = clean_scope(scope)
    with ctx.vault.storage.lock():
        planned = planned_again_if_edited(lambda: _scope_written(ctx, scope))
    if isinstance(planned, ScopeResult):
        return Envelope(True, Action.UNCHANGED, "scope unchanged", planned)
    before, stamp = planned
    updated = stamp.isoformat()
    result = ScopeResult(scope=scope, scope_updated=updated,
                         sessions_since=sessions_since(ctx, updated),
                         previous=before.scope if before.scope != PLACEHOLDER else None,
                         changed=True)
    return Envelope(True, Action.UPDATED, f"scope set: {scope.splitlines()[0]}", result)

