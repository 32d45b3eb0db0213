"""The vault marker (``_agent/echo-vault.md``, SPEC §1.1): what the sweep repairs.

A missing marker, or one whose frontmatter is not a marker's (no block, a block that does
not parse, ``type`` other than ``marker``), is rewritten with ``init``'s text, keeping its
``created`` date when that is still readable. A marker of an older or unset
``schema_version`` gets the current one stamped (one line, the rest untouched). A marker
of a newer schema is an error: this echo-memory must not downgrade it.
"""

from __future__ import annotations

import datetime as _dt
import re

import attrs

from echo_core.errors import EchoError, ExitCode, NotConfiguredError
from echo_core.frontmatter import set_frontmatter_key
from echo_core.notes import parse_note
from echo_core.ops.init import marker_text
from echo_core.ops.sweep.model import MarkerRepair
from echo_core.protocols import BackendUnavailable, Storage
from echo_core.vault import MARKER_PATH

_CREATED = re.compile(r"^created:\s*['\"]?(\d{4}-\d{2}-\d{2})", re.MULTILINE)


@attrs.frozen
class MarkerPlan:
    """The repair (None: the marker is fine), the marker's current text (None: absent or
    unreadable) and the text to write."""

    repair: MarkerRepair | None
    current: str | None = None
    new_text: str = ""


def _read(storage: Storage, path: str) -> tuple[str | None, str]:
    """The marker's text (None when absent or unreadable) and why it is unreadable."""
    try:
        return storage.read(path), ""
    except BackendUnavailable:
        raise
    except EchoError as exc:
        if exc.code == ExitCode.NOT_FOUND:
            return None, "missing"
        return None, f"unreadable ({exc.message})"
    except UnicodeError as exc:
        return None, f"not UTF-8 ({exc})"


def _created(text: str | None, today: _dt.date) -> str:
    """The marker's ``created`` date when a line still says it, else ``today``."""
    found = _CREATED.search(text or "")
    if found:
        try:
            return _dt.date.fromisoformat(found.group(1)).isoformat()
        except ValueError:
            pass
    return today.isoformat()


def plan_marker(storage: Storage, schema: int, today: _dt.date) -> MarkerPlan:
    """What the marker needs (module docstring). Errors: 78 for a newer schema."""
    text, problem = _read(storage, MARKER_PATH)
    if text is not None:
        note = parse_note(MARKER_PATH, text)
        if note.frontmatter_error:
            problem = f"damaged frontmatter ({note.frontmatter_error})"
        elif not note.frontmatter:
            problem = "no frontmatter"
        elif note.frontmatter.get("type") != "marker":
            problem = f"type is {note.frontmatter.get('type')!r}, not 'marker'"
    if problem:
        created = _created(text, today)
        return MarkerPlan(MarkerRepair("rewritten", problem, created), text,
                          marker_text(schema, created))
    assert text is not None
    found = parse_note(MARKER_PATH, text).frontmatter.get("schema_version")
    if isinstance(found, int) and not isinstance(found, bool) and found > schema:
        raise NotConfiguredError(f"{MARKER_PATH} has schema_version {found}; this "
                                 f"echo-memory knows {schema}. Upgrade echo-memory.")
    if found == schema and not isinstance(found, bool):
        return MarkerPlan(None, text, text)
    try:
        stamped = set_frontmatter_key(text, "schema_version", schema)
    except EchoError:
        created = _created(text, today)
        return MarkerPlan(MarkerRepair("rewritten", "schema_version cannot be edited "
                                       "line-wise", created), text, marker_text(schema, created))
    return MarkerPlan(MarkerRepair("stamped", f"schema_version was {found!r}, now {schema}"),
                      text, stamped)
