"""Processed and expired inbox lines: the rule that lets the inbox drain (issue 16 item 6).

The inbox file (``inbox/captures/inbox.md``) is the one truth about what is waiting. A
*waiting* item is a ``- YYYY-MM-DD: text`` line (``echo_core.ops.triage.parse_inbox``).
When ``triage apply --apply`` routes an item, or ``inbox review --apply`` expires one,
its line is struck in place, the original text between the ``~~``, followed by where it
went (or that it expired) and the day::

    - ~~2026-02-20: met Ada at the engine demo~~ → resources/people/ada-lovelace.md (processed 2026-03-01)
    - ~~2025-12-01: look at the old printer~~ (expired 2026-03-01)

The strike holds whatever the text says (``strike_text``): outside code spans each ``~``
is written ``\\~`` and the backslashes right before it or at the end are doubled, so a
``~~`` in the text cannot close the strike early and a trailing backslash cannot escape
its closing ``~~``; code spans and every other character are kept as typed, and
``struck_original`` gives the exact original line back.

A struck line no longer matches the item pattern, so ``triage list``, ``load`` and the
brief leave it out; Obsidian shows it struck through. Nothing else in the file changes
(other lines, their order and the file's line endings are kept) and nothing is deleted;
the processing log still gets its audit line ``- <original line> → <path>``.

Why the file and not the processing log decides: what a person sees is what counts. A
line struck by hand is processed; a line added again later, or captured again with the
same text, is a new waiting item even though an audit line for an identical line exists
(the audit log is history, not state). Striking is idempotent: only waiting lines are
struck, so a second run finds nothing to do.

The one use of the log is to finish a routing that was not struck (``unstruck_routes``):
an apply writes each audit line before it strikes, so a run stopped in between (killed,
or a vault triaged before lines were struck) leaves a waiting line whose audit line of
that day no strike of the same line and day matches. Such a line is *routed, not
struck*: ``triage list`` says so, and the next apply or review naming it strikes it with
the day of its audit line, routing nothing again. A line whose strike was removed by
hand looks the same and is handled the same way. Matching by day is what lets a line
added again be new: its earlier routing's audit line is matched by that routing's strike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from echo_core.edit_retry import planned_again_if_edited
from echo_core.errors import EchoError, ExitCode
from echo_core.vault import INBOX_PATH

if TYPE_CHECKING:
    from echo_core.context import EchoContext

#: ``- ~~<date>: <text>~~ [→ <path> ](processed|expired <day>)``; the text is greedy up to
#: the last ``~~`` before the suffix, so a text holding ``~~`` itself survives.
_MARKED = re.compile(r"^- ~~(\d{4}-\d{2}-\d{2}: .*)~~(?: → (.+?))? "
                     r"\((processed|expired) (\d{4}-\d{2}-\d{2})\)\s*$")
#: Any other line struck by hand: ``- ~~<date>: <text>~~ ...``.
_STRUCK = re.compile(r"^- ~~(\d{4}-\d{2}-\d{2}: .*?\S)~~")
#: The target the audit line of an expired item names (not a note path).
EXPIRED_TARGET = "(expired)"
#: ``inbox review`` expires waiting items older than this many days by default.
EXPIRE_AFTER_DAYS = 30


def _content(line: str) -> str:
    """``line`` without its bullet and surrounding whitespace: ``2026-02-20: met Ada``."""
    return line.strip().removeprefix("- ")


def _run(text: str, at: int, char: str) -> int:
    """How many ``char`` follow one another in ``text`` from ``at``."""
    end = at
    while end < len(text) and text[end] == char:
        end += 1
    return end - at


def _in_code(text: str) -> list[bool]:
    """Per character of ``text``: whether it is part of a code span (CommonMark: a
    backtick string not escaped by a backslash, up to the next backtick string of the
    same length; an unmatched one is plain text)."""
    inside = [False] * len(text)
    at = 0
    while at < len(text):
        if text[at] == "\\":
            at += 2  # an escape pair (an escaped backtick opens nothing)
            continue
        if text[at] != "`":
            at += 1
            continue
        run = _run(text, at, "`")
        close = next((m for m in re.finditer(r"`+", text[at + run:])
                      if len(m.group()) == run), None)
        if close is None:
            at += run
            continue
        end = at + run + close.end()
        inside[at:end] = [True] * (end - at)
        at = end
    return inside


def _rewrite(text: str, *, escape: bool) -> str:
    """``strike_text`` (``escape``) or its inverse: outside code spans, a run of ``n``
    backslashes at the end is written ``2n`` and one before a ``~`` ``2n + 1`` (that
    ``~`` escaped); any other run is kept. Undoing it, a run of the wrong parity (a
    line struck before escaping, or by hand) is kept as it is."""
    inside = _in_code(text)
    out: list[str] = []
    at = 0
    while at < len(text):
        char = text[at]
        if inside[at] or char not in "\\~":
            out.append(char)
            at += 1
            continue
        run = _run(text, at, "\\")
        after = at + run
        tilde = after < len(text) and text[after] == "~" and not inside[after]
        if after == len(text):
            kept = 2 * run if escape else (run // 2 if run % 2 == 0 else run)
        elif tilde:
            kept = 2 * run + 1 if escape else ((run - 1) // 2 if run % 2 else run)
        else:
            kept = run
        out.append("\\" * kept + ("~" if tilde else ""))
        at = after + (1 if tilde else 0)
    return "".join(out)


def strike_text(content: str) -> str:
    """``content`` (a line without its bullet) as written between the ``~~`` of a strike
    (module docstring); ``struck_original`` undoes it exactly."""
    return _rewrite(content, escape=True)


def unstrike_text(struck: str) -> str:
    """The text ``strike_text`` was given, from what it wrote between the ``~~``."""
    return _rewrite(struck, escape=False)


def processed_line(line: str, path: str, day: str) -> str:
    """Waiting ``line`` struck as routed to ``path`` on ``day`` (ISO)."""
    return f"- ~~{strike_text(_content(line))}~~ → {path} (processed {day})"


def expired_line(line: str, day: str) -> str:
    """Waiting ``line`` struck as expired on ``day`` (ISO)."""
    return f"- ~~{strike_text(_content(line))}~~ (expired {day})"


def struck_original(line: str) -> str | None:
    """The original ``- <date>: <text>`` of a struck inbox line (of ``processed_line`` or
    ``expired_line``: exactly the line struck; struck by hand: the text as it stands),
    None for any other line."""
    line = line.rstrip("\r")
    if (found := _MARKED.match(line)) is not None:
        return f"- {_rewrite(found.group(1), escape=False)}"
    found = _STRUCK.match(line)
    return f"- {found.group(1)}" if found else None


def struck_target(line: str) -> str | None:
    """The path a processed line names (None for an expired or hand-struck line)."""
    found = _MARKED.match(line.rstrip("\r"))
    return found.group(2) if found and found.group(3) == "processed" else None


def struck_lines(text: str) -> dict[str, str]:
    """Original line -> the first struck line holding it, for every struck line of ``text``."""
    found: dict[str, str] = {}
    for raw in text.splitlines():
        original = struck_original(raw)
        if original is not None:
            found.setdefault(original, raw.rstrip("\r"))
    return found


def strike(text: str, marks: Mapping[str, str]) -> str:
    """``text`` with every line equal (ignoring surrounding whitespace) to a key of
    ``marks`` replaced by its value; line endings and every other byte are kept."""
    out: list[str] = []
    for raw in text.splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        ending = raw[len(body):]
        out.append(marks.get(body.strip(), body) + ending)
    return "".join(out)


def read_optional(ctx: EchoContext, path: str) -> str:
    """The text at ``path``, empty when absent (other errors propagate)."""
    try:
        return ctx.vault.storage.read(path)
    except EchoError as exc:
        if exc.code == ExitCode.NOT_FOUND:
            return ""
        raise


def mark_inbox(ctx: EchoContext, marks: Mapping[str, str]) -> int:
    """Strike the waiting lines named by ``marks`` (stripped original -> struck line) in
    the inbox; returns how many lines changed. Call it holding the vault lock: it
    re-reads the inbox first, so a line appended meanwhile is kept. The prior text goes
    to the note history like any overwrite (SPEC §5.6). A missing inbox changes nothing.
    A person's save while it writes is kept: the marks are made again on it
    (``edit_retry``)."""
    if not marks:
        return 0

    def mark_once() -> int:
        before = read_optional(ctx, INBOX_PATH)
        after = strike(before, marks)
        if after == before:
            return 0
        changed = sum(1 for a, b in zip(before.splitlines(), after.splitlines(), strict=True)
                      if a != b)
        ctx.vault.update_note(INBOX_PATH, after, before)
        return changed

    return planned_again_if_edited(mark_once)


def struck_day(line: str) -> str | None:
    """The day (ISO) a line struck by triage or review names (``processed`` or
    ``expired``); None for any other line, a line struck by hand included."""
    found = _MARKED.match(line.rstrip("\r"))
    return found.group(4) if found else None


def audit_record(line: str) -> tuple[str, str] | None:
    """``(original line, target)`` of a processing-log audit line ``- <x> → <target>``
    (a note path, or ``EXPIRED_TARGET``); None for any other line."""
    original, arrow, target = line.strip().rpartition(" → ")
    if arrow and original.startswith("- ") and (target.endswith(".md")
                                                or target == EXPIRED_TARGET):
        return original, target
    return None


def unstruck_routes(inbox_text: str, logs: Mapping[str, str],
                    waiting: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Waiting line -> ``(target, day)`` of the latest routing not struck (module
    docstring): an audit line for it in the log of ``day`` (``logs``: day -> the text of
    ``inbox/processing-log/<day>.md``) and no line of ``inbox_text`` struck by triage or
    review on that day holding it. Only the lines of ``waiting`` (stripped) are looked at."""
    keys = set(waiting)
    struck: dict[str, set[str]] = {}
    for raw in inbox_text.splitlines():
        original, day = struck_original(raw), struck_day(raw)
        if original is not None and day is not None:
            struck.setdefault(original, set()).add(day)
    found: dict[str, tuple[str, str]] = {}
    for day in sorted(logs):
        for line in logs[day].split("\n"):
            record = audit_record(line)
            if record is not None and record[0] in keys and day not in struck.get(
                    record[0], ()):
                found[record[0]] = (record[1], day)
    return found


def finished_line(line: str, target: str, day: str) -> str:
    """Waiting ``line`` struck as its unstruck routing to ``target`` on ``day`` says."""
    return expired_line(line, day) if target == EXPIRED_TARGET else processed_line(
        line, target, day)
