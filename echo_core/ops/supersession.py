"""Supersession (SPEC §2.6): a capture that replaces an older note or preference line.

``capture --supersedes VALUE`` names what the capture replaces:

* a note: VALUE is its slug, title or alias (``find_superseded``). The capture writes its
  own note as usual; in the same commit the old note gets ``status: superseded``,
  ``superseded_by: "[[new]]"`` and ``superseded_at: <day>`` (``mark_superseded``), the new
  one ``supersedes: "[[old]]"`` (``mark_superseding``), and both are linked under
  ``## Related``. The old note's text is otherwise untouched; nothing is deleted.
* a line of the operator preferences (kind semantic only), when VALUE names no note: the
  bullet whose text is VALUE (``find_preference_line``) is struck in place,
  ``- ~~<its text>~~ (superseded <day>)``, and the new line is appended to the same
  section (``replace_preference_line``). The struck text is the old line's byte for byte.

A note already superseded by another one is not superseded again (the error names the
one that replaced it); superseding the same note twice with the same capture is a no-op.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

import attrs

from echo_core.errors import not_found, usage_error
from echo_core.frontmatter import set_frontmatter_key
from echo_core.models import Entity
from echo_core.notes import append_under_heading, find_section, parse_note
from echo_core.ops.inbox_marks import strike_text, unstrike_text
from echo_core.ops.links import link_target
from echo_core.protocols import EntityLookup
from echo_core.routing import SEMANTIC

PREFERENCES_PATH = "_agent/memory/semantic/operator-preferences.md"
#: The sections of the preferences note whose bullets a capture may supersede.
PREFERENCE_SECTIONS = ("Fact / Pattern", "Observations")
SUPERSEDED = "superseded"
MAX_LISTED = 8

_BULLET_RE = re.compile(r"^(\s*[-*+]\s+)(.*?)(\s*)$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}:\s*")
_STRUCK_RE = re.compile(r"^~~(.*)~~")


@attrs.frozen
class PreferenceLine:
    """One bullet of the preferences note: its section, its exact line (no line end) and
    the character offset where that line starts in the note's text."""

    heading: str
    line: str
    offset: int

    @property
    def dated(self) -> bool:
        """Whether the bullet's text starts with ``YYYY-MM-DD:``."""
        match = _BULLET_RE.match(self.line)
        return bool(match and _DATE_RE.match(match.group(2)))


def wikilink(path: str) -> str:
    """``[[target]]`` for the note at ``path`` (the form kept in frontmatter)."""
    return f"[[{link_target(path)}]]"


def find_superseded(index: EntityLookup, value: str) -> Entity | None:
    """The entity ``value`` names (slug, else exactly one title or alias), or None."""
    entity = index.get(value) or index.get(value.casefold())
    if entity is not None:
        return entity
    matches = list(index.exact(value))
    if len(matches) > 1:
        listed = ", ".join(sorted(e.slug for e in matches)[:MAX_LISTED])
        raise usage_error(f"supersedes: {value!r} names {len(matches)} notes ({listed}); "
                          "give the slug")
    return matches[0] if matches else None


def check_supersedable(old: Entity, old_text: str, new_path: str | None) -> bool:
    """Whether ``old`` still needs marking: False when ``new_path``'s note already
    superseded it; ``usage_error`` when it is the same note or another note replaced it."""
    if new_path is not None and old.path == new_path:
        raise usage_error(f"supersedes: {old.slug!r} is the note this capture writes; a note "
                          "cannot supersede itself")
    current = parse_note(old.path, old_text).frontmatter.get("superseded_by")
    if current in (None, ""):
        return True
    if new_path is not None and str(current).strip() == wikilink(new_path):
        return False
    raise usage_error(f"supersedes: {old.path} is already superseded by {current}; "
                      "supersede that note instead")


def mark_superseded(text: str, new_path: str, day: _dt.date) -> str:
    """``text`` (the old note) with ``status: superseded``, ``superseded_by`` and
    ``superseded_at`` set, one frontmatter line each."""
    text = set_frontmatter_key(text, "status", SUPERSEDED)
    text = set_frontmatter_key(text, "superseded_by", wikilink(new_path))
    return set_frontmatter_key(text, "superseded_at", day)


def mark_superseding(text: str, old_path: str) -> str:
    """``text`` (the new note) with ``supersedes`` naming ``old_path``; a note that
    already supersedes others gets a list."""
    link = wikilink(old_path)
    current: Any = parse_note("", text).frontmatter.get("supersedes")
    if current in (None, ""):
        return set_frontmatter_key(text, "supersedes", link)
    values = [str(v) for v in (current if isinstance(current, list) else [current])]
    if link in values:
        return text
    return set_frontmatter_key(text, "supersedes", values + [link])


def _key(text: str) -> str:
    """A bullet's text compared loosely: no marker, no leading date, spaces folded."""
    match = _BULLET_RE.match(text)
    body = match.group(2) if match else text.strip()
    return " ".join(_DATE_RE.sub("", body).split()).casefold()


def preference_lines(text: str) -> list[PreferenceLine]:
    """Every bullet of the sections ``PREFERENCE_SECTIONS`` of the preferences note."""
    found: list[PreferenceLine] = []
    for heading in PREFERENCE_SECTIONS:
        span = find_section(text, heading)
        if span is None:
            continue
        start, end = span
        offset = start
        for raw in text[start:end].splitlines(keepends=True):
            line = raw.rstrip("\r\n")
            if _BULLET_RE.match(line) and not line.lstrip().startswith("#"):
                found.append(PreferenceLine(heading, line, offset))
            offset += len(raw)
    return found


def _struck(line: PreferenceLine) -> bool:
    match = _BULLET_RE.match(line.line)
    return bool(match and _STRUCK_RE.match(match.group(2)))


def _struck_text(line: PreferenceLine) -> str:
    """The text a struck bullet had before it was struck."""
    match = _BULLET_RE.match(line.line)
    inner = _STRUCK_RE.match(match.group(2)) if match else None
    return unstrike_text(inner.group(1)) if inner else line.line


def find_preference_line(text: str, value: str) -> PreferenceLine | None:
    """The live (not struck) bullet whose text is ``value`` (compared loosely), else the
    only one containing it; None when a struck bullet matches instead (superseded
    already); ``not_found`` / ``usage_error`` when nothing or several match."""
    lines = preference_lines(text)
    want = _key(value)
    live = [line for line in lines if not _struck(line)]
    exact = [line for line in live if _key(line.line) == want]
    if len(exact) == 1:
        return exact[0]
    partial = exact or [line for line in live if want and want in _key(line.line)]
    if len(partial) == 1:
        return partial[0]
    if len(partial) > 1:
        listed = "; ".join(repr(line.line.strip()) for line in partial[:MAX_LISTED])
        raise usage_error(f"supersedes: {value!r} matches {len(partial)} preference lines "
                          f"({listed}); quote the whole line")
    if any(want and want in _key(_struck_text(line)) for line in lines if _struck(line)):
        return None
    shown = "; ".join(repr(line.line.strip()) for line in live[:MAX_LISTED]) or "none"
    raise not_found(f"supersedes: no note has the slug, title or alias {value!r}, and no "
                    f"line of {PREFERENCES_PATH} reads so (its lines: {shown})")


def new_preference_line(title: str, body: str, day: _dt.date, *, dated: bool) -> str:
    """The bullet a superseding capture adds: its title, then `` — `` and the body's first
    line when there is a body; dated like the line it replaces."""
    first = body.split("\n", 1)[0].strip() if body else ""
    text = title + (f" — {first}" if first and first != title else "")
    return f"- {day.isoformat()}: {text}" if dated else f"- {text}"


def strike(line: PreferenceLine, day: _dt.date) -> str:
    """The struck form of ``line``: its text inside ``~~`` (written so that the strike
    holds whatever the text says: ``inbox_marks.strike_text``), then ``(superseded
    <day>)``."""
    match = _BULLET_RE.match(line.line)
    assert match is not None  # preference_lines keeps bullets only
    marker, body, _tail = match.groups()
    return f"{marker}~~{strike_text(body)}~~ (superseded {day.isoformat()})"


def replace_preference_line(text: str, old: PreferenceLine, new_line: str,
                            day: _dt.date) -> str:
    """``text`` with ``old`` struck in place and ``new_line`` appended to its section
    (unless that section already holds it)."""
    end = old.offset + len(old.line)
    text = text[:old.offset] + strike(old, day) + text[end:]
    text, _changed = append_under_heading(text, old.heading, [new_line])
    return text


def has_line(text: str, heading: str, line: str) -> bool:
    """Whether section ``heading`` of ``text`` holds ``line`` (trailing spaces ignored)."""
    span = find_section(text, heading)
    if span is None:
        return False
    return any(raw.rstrip() == line.rstrip() for raw in text[span[0]:span[1]].splitlines())


__all__ = ["PREFERENCES_PATH", "SEMANTIC", "PreferenceLine", "check_supersedable", "find_preference_line",
           "find_superseded", "has_line", "mark_superseded", "mark_superseding",
           "new_preference_line", "preference_lines", "replace_preference_line", "strike",
           "wikilink"]
