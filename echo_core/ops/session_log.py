"""The session log note ``session-end`` writes (SPEC §4.3): its path and its text.

``_agent/sessions/<date>-<HHMM>-<slug>.md``, from the session template. The bundle's
``log_body`` is placed in it: a ``## Goal`` / ``## Decisions Made`` / ``## Open Threads``
/ ``## Suggested Next Step`` section fills the template's section with the paragraph or
list right under its heading; everything else goes under ``## Log`` in the order
written (``render_session_log``), so nothing of the body is dropped. A bundle applied
again later the same day finds the log it wrote (``logged_today``).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Iterable

from echo_core.notes import replace_section_body
from echo_core.ops.digest import LOG_HEADING
from echo_core.ops.scope import SESSIONS_DIR
from echo_core.templates import render_template

TEMPLATE_SECTIONS = ("Goal", "Decisions Made", "Open Threads", "Suggested Next Step")


def session_log_path(day: _dt.date, now: _dt.datetime, slug: str) -> str:
    """``_agent/sessions/<YYYY-MM-DD>-<HHMM>-<slug>.md``."""
    return f"{SESSIONS_DIR}/{day.isoformat()}-{now:%H%M}-{slug}.md"


_SPLIT_HEADING = re.compile(r"^ {0,3}(#{1,2})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CONTINUES = re.compile(r"^(?:[ \t]|[-*+][ \t]|\d+[.)][ \t]|>|\||#{3,}[ \t])")


def _closes(opener: re.Match[str] | None, fence: str) -> bool:
    """Whether a line whose fence match is ``opener`` closes the open ``fence``."""
    return opener is not None and opener.group(1)[0] == fence[0] and len(
        opener.group(1)) >= len(fence)


def _parts(body: str) -> list[tuple[str | None, list[str]]]:
    """``body`` cut at its ``#`` and ``##`` headings (not inside code fences):
    ``(heading title or None for the text before the first, lines)`` in order."""
    parts: list[tuple[str | None, list[str]]] = [(None, [])]
    fence = ""
    for line in body.splitlines():
        opener = _FENCE.match(line)
        if fence:
            fence = "" if _closes(opener, fence) else fence
        elif opener:
            fence = opener.group(1)
        elif heading := _SPLIT_HEADING.match(line):
            parts.append(((heading.group(2) or "").strip(), []))
            continue
        parts[-1][1].append(line)
    return parts


def _own_lines(lines: list[str]) -> tuple[list[str], list[str]]:
    """A known section's lines split into what it holds and the log text after it.

    It holds the paragraph or list right under its heading and everything that
    continues it: list items, indented lines, quotes, tables, code fences, ``###``
    sub-headings. A plain paragraph after a blank line is log text: it and the rest
    of the part go under ``## Log``."""
    fence, blank, held = "", False, False
    for i, line in enumerate(lines):
        opener = _FENCE.match(line)
        if fence:
            fence = "" if _closes(opener, fence) else fence
            continue
        if not line.strip():
            blank = True
            continue
        if blank and held and not opener and not _CONTINUES.match(line):
            return lines[:i], lines[i:]
        fence = opener.group(1) if opener else ""
        blank, held = False, True
    return lines, []


def render_session_log(slug: str, log_body: str, day: _dt.date, now: _dt.datetime) -> str:
    """The session log note: the session template with ``log_body`` placed in it.

    A ``## Goal`` / ``## Decisions Made`` / ``## Open Threads`` / ``## Suggested Next
    Step`` section (any case) fills the template's section with what it holds
    (``_own_lines``; the same section twice: both, in order). Everything else goes under
    ``## Log``, in the order written, nothing dropped: text before the first heading,
    log text after a known section, and every other ``#`` / ``##`` section (its heading
    as ``###``; a ``## Log`` section's text as it is)."""
    text = render_template("session", date=day.isoformat(),
                           title=f"{slug} ({day.isoformat()} {now:%H:%M})")
    filled: dict[str, list[str]] = {}
    log: list[str] = []
    for title, lines in _parts(log_body):
        known = next((t for t in TEMPLATE_SECTIONS
                      if title is not None and t.casefold() == title.casefold()), None)
        if known is not None:
            own, rest = _own_lines(lines)
            filled.setdefault(known, []).append("\n".join(own).strip())
            log.append("\n".join(rest).strip())
        elif not title or title.casefold() == LOG_HEADING.casefold():
            log.append("\n".join(lines).strip())
        else:
            log.append(f"### {title}\n\n" + "\n".join(lines).strip())
    for known, bodies in filled.items():
        text = replace_section_body(text, "## " + known, "\n\n".join(b for b in bodies if b))
    log_text = "\n\n".join(part.strip() for part in log if part.strip())
    if log_text:
        text = replace_section_body(text, "## " + LOG_HEADING, log_text)
    return text


def logged_today(paths: Iterable[str], read: Callable[[str], str | None], day: _dt.date,
                 slug: str, log_body: str) -> str | None:
    """The session log of this bundle already written on ``day``, at any minute: the
    first of ``paths`` named ``<day>-<HHMM>-<slug>.md`` whose text (``read``; None when
    gone) is exactly what ``render_session_log`` gives for ``slug``, ``log_body`` and
    that minute; None when there is none. A session is its day, slug and content, not
    its minute: a bundle applied again later that day (a retry, a replay) is the same
    session. Reads only the logs named for ``slug`` that day."""
    name = re.compile(re.escape(f"{SESSIONS_DIR}/{day.isoformat()}-")
                      + r"([01]\d|2[0-3])([0-5]\d)-" + re.escape(slug) + r"\.md")
    for path in sorted(paths):
        found = name.fullmatch(path)
        if found is None:
            continue
        minute = _dt.datetime.combine(day, _dt.time(int(found.group(1)), int(found.group(2))))
        if read(path) == render_session_log(slug, log_body, day, minute):
            return path
    return None
