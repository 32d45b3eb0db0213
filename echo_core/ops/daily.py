"""The daily note and its ``## Agent Log`` (SPEC §1.1, §2.1 step 8)."""

from __future__ import annotations

import datetime as _dt

from echo_core.edit_retry import planned_again_if_edited
from echo_core.notes import append_under_heading
from echo_core.templates import render_template
from echo_core.vault import NoteWriter

AGENT_LOG_HEADING = "Agent Log"


def daily_note_path(day: _dt.date) -> str:
    """``journal/daily/YYYY-MM-DD.md``."""
    return f"journal/daily/{day.isoformat()}.md"


def append_agent_log(vault: NoteWriter, day: _dt.date, line: str, *,
                     rerun: bool = False) -> bool:
    """Append ``line`` under ``## Agent Log`` of the day's note (created from the template
    when absent). True when written.

    The agent log is a log of events: every call is one event and adds its line, even
    when an identical line is already there (two real updates of one entity on one day
    are two lines). Exactly-once belongs to the operation, not the text: a capture's line
    is staged with its other writes under its operation id, so a replayed capture whose
    id is committed never gets here and crash recovery rewrites the staged texts instead
    of appending again (``ops.write_intent``). ``rerun=True`` says this call may repeat an
    operation that already logged (a session-end bundle applied again): then a line
    already present is not added twice."""
    path = daily_note_path(day)

    def append_once() -> bool:
        prior = vault.storage.read(path) if vault.storage.exists(path) else None
        text = prior if prior is not None else render_template(
            "daily", date=day.isoformat(), title=day.isoformat())
        new_text, changed = append_under_heading(text, AGENT_LOG_HEADING, [line], once=rerun)
        if changed:  # the daily note is a person's too: their save meanwhile is kept
            vault.update_note(path, new_text, prior, keep_history=False)
        return changed

    return planned_again_if_edited(append_once)
