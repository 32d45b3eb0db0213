"""The mechanical lines of a daily note's ``## Agent Log`` (SPEC §2.1 step 8, §4.3 step 2).

``capture`` logs every write as ``- <date>: created <kind> [[<note>]]`` (or ``updated``);
``session-end`` without an ``agent_log_line`` logs ``- <date>: session [[<log>]]``. Such a
line records that a write happened, not anything learned, and an hour of captures turns
the daily note into a hub linking everything touched that day. So these lines are not
content: recall does not index them (``corpus``) nor follow their links (recall's graph
neighbours), and the brief sums up the capture lines in one line (``ops.digest``). A line
the agent wrote itself (a session-end ``agent_log_line``) is content like any other.
"""

from __future__ import annotations

from echo_core.lazy_pattern import LazyPattern

DAILY_PREFIX = "journal/daily/"

#: ``- <stamp>: created|updated <kind> [[<note>]]``; the stamp is a date, maybe a time.
_CAPTURE_LINE = LazyPattern(r"[-*][ \t]+[^\[\]\n]*?:[ \t]+(?P<verb>created|updated)[ \t]+"
                           r"[^\s\[\]]+[ \t]+\[\[(?P<target>[^\[\]\n]+)\]\][ \t]*")
#: ``- <stamp>: session [[<log>]]`` (session-end's default line).
_SESSION_LINE = LazyPattern(r"[-*][ \t]+[^\[\]\n]*?:[ \t]+session[ \t]+\[\[[^\[\]\n]+\]\][ \t]*")


def is_daily_note(path: str) -> bool:
    """Whether ``path`` is a daily note (``journal/daily/...``)."""
    return path.startswith(DAILY_PREFIX)


def capture_record(line: str) -> tuple[str, str] | None:
    """``(verb, link target)`` of a line capture logs for a note it created or updated
    (``("created", "kappa-engine")``); None for any other line."""
    match = _CAPTURE_LINE.fullmatch(line.strip())
    return (match["verb"], match["target"]) if match else None


def is_capture_line(line: str) -> bool:
    """Whether ``line`` is a line capture logs for a note it created or updated."""
    return _CAPTURE_LINE.fullmatch(line.strip()) is not None


def is_mechanical_line(line: str) -> bool:
    """Whether ``line`` is a capture line or session-end's default session line."""
    stripped = line.strip()
    return (_CAPTURE_LINE.fullmatch(stripped) is not None
            or _SESSION_LINE.fullmatch(stripped) is not None)


def without_mechanical_lines(text: str) -> str:
    """``text`` without its mechanical lines (every other line kept byte for byte)."""
    if "[[" not in text:
        return text
    return "".join(line for line in text.splitlines(keepends=True)
                   if "[[" not in line or not is_mechanical_line(line))
