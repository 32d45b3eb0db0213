"""The daily note and its ``## Agent Log`` (SPEC §1.1, §2.1 step 8)."""

from __future__ import annotations

import datetime as _dt

from echo_core.notes import append_under_heading
from echo_core.templates import render_template
from echo_core.vault import NoteWriter

AGENT_LOG_HEADING = "Agent Log"


def daily_note_path(day: _dt.date) -> str:
    """``journal/daily/YYYY-MM-DD.md``."""
    return f"journal/daily/{day.isoformat()}.md"


def append_agent_log(vault: NoteWriter, day: _dt.date, line: str) -> bool:
    """Append ``line`` under ``## Agent Log`` of the day's note (created from the template
    when absent). Idempotent: an identical line is not added twice. True when written."""
    path = daily_note_path(day)
    if vault.storage.exists(path):
        text = vault.storage.read(path)
    else:
        text = render_template("daily", date=day.isoformat(), title=day.isoformat())
    new_text, changed = append_under_heading(text, AGENT_LOG_HEADING, [line])
    if changed:
        vault.write_note(path, new_text, keep_history=False)
    return changed
