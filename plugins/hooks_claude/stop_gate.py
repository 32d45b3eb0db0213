"""The Stop hook's decision: ask once per substantive session to save what was learned.

Block (ask) only when ALL hold, cheapest checks first:

1. ``stop_hook_active`` is not true (Claude Code is not already continuing because of a
   Stop hook);
2. the session has an id and was not asked before: asked ids are marker files
   ``<state dir>/hooks_claude/stop-asked/<session id>``, created exclusively, so two racing
   hooks ask once; markers older than ``MARKER_TTL_DAYS`` are pruned;
3. the session is substantive: at least ``SUBSTANTIVE_TOOL_USES`` (5) tool uses, or at
   least ``SUBSTANTIVE_EDITS`` (2) file edits, in the transcript;
4. nothing was saved yet: the transcript shows no echo-memory write (``capture``,
   ``session-end --apply``, ``reflect --apply`` by Bash or MCP; see ``transcript``), and
   no session log under ``_agent/sessions/`` was modified since the session's first
   transcript timestamp (catches a session-end run outside the agent's tools);
5. the vault is initialised (asking to save into no vault helps nobody).

The PreCompact checkpoint note does not count as saved: it is automatic, not reflection.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import time
from pathlib import Path
from typing import Any

from plugins.hooks_claude.transcript import TranscriptSummary, read_transcript

SUBSTANTIVE_TOOL_USES = 5
SUBSTANTIVE_EDITS = 2
MARKER_TTL_DAYS = 30
SESSIONS_FOLDER = "_agent/sessions"
#: Seconds of clock skew tolerated between the transcript and the vault's file times.
CLOCK_SLACK_S = 2.0
#: A session log's file name: ``YYYY-MM-DD-HHMM-<slug>.md`` (READMEs and others are not).
_SESSION_LOG = re.compile(r"^\d{4}-\d{2}-\d{2}-.+\.md$")

REASON = (
    "echo-memory: this session did substantive work ({tool_uses} tool uses, {edits} file "
    "edits) and nothing from it has been saved to memory yet. Before you stop, save what "
    "was learned, in one short pass: (1) capture durable facts, decisions and operator "
    "preferences with `echo-memory capture \"<title>\" --kind <kind> --body \"...\"`; "
    "(2) log the session: write a bundle JSON (slug, log_body with Goal / Decisions Made / "
    "Open Threads / Suggested Next Step, agent_log_line) and run `echo-memory session-end "
    "bundle.json --apply` (the reflect skill shows the format). If nothing is worth "
    "keeping, say so in one line and stop. This is asked once per session."
)


def is_substantive(summary: TranscriptSummary) -> bool:
    """At least ``SUBSTANTIVE_TOOL_USES`` tool uses or ``SUBSTANTIVE_EDITS`` edits."""
    return summary.tool_uses >= SUBSTANTIVE_TOOL_USES or summary.edits >= SUBSTANTIVE_EDITS


def marker_name(session_id: Any) -> str | None:
    """A safe file name for ``session_id`` (None when there is no usable id)."""
    if not isinstance(session_id, str):
        return None
    name = re.sub(r"[^A-Za-z0-9._-]", "_", session_id.strip())[:128].strip(".")
    return name or None


def _markers(ctx: Any) -> Path:
    return Path(ctx.state_dir) / "hooks_claude" / "stop-asked"


def already_asked(ctx: Any, name: str) -> bool:
    """Whether the session's marker exists."""
    return (_markers(ctx) / name).exists()


def mark_asked(ctx: Any, name: str) -> bool:
    """Create the session's marker exclusively; False when another hook got there first.
    Prunes markers older than ``MARKER_TTL_DAYS``."""
    folder = _markers(ctx)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    os.close(fd)
    cutoff = time.time() - MARKER_TTL_DAYS * 86400
    for old in folder.iterdir():
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            pass
    return True


def saved_in_vault(ctx: Any, started_at: float | None) -> bool:
    """Whether a session log was written at or after ``started_at`` (epoch seconds).

    Only session logs (``YYYY-MM-DD-...md``) dated no earlier than the day before the start
    are stat'ed, so the cost stays small in a vault with years of sessions.
    """
    if started_at is None:
        return False
    storage = ctx.vault.storage
    first_day = (_dt.datetime.fromtimestamp(started_at, _dt.UTC).date()
                 - _dt.timedelta(days=1)).isoformat()
    for path in storage.list(SESSIONS_FOLDER):
        name = path.rsplit("/", 1)[-1]
        if not _SESSION_LOG.match(name) or name[:10] < first_day:
            continue
        if storage.stat(path).mtime >= started_at - CLOCK_SLACK_S:
            return True
    return False


def stop_decision(payload: dict[str, Any], make_ctx: Any) -> dict[str, Any] | None:
    """The Stop hook's output for ``payload``: a block asking to save, or None (quiet)."""
    if payload.get("stop_hook_active"):
        return None
    name = marker_name(payload.get("session_id"))
    if name is None:
        return None
    ctx = make_ctx()
    if already_asked(ctx, name):
        return None
    summary = read_transcript(payload.get("transcript_path"))
    if not is_substantive(summary) or summary.saved:
        return None
    from echo_core import MARKER_PATH

    if not ctx.vault.storage.exists(MARKER_PATH):
        return None
    if saved_in_vault(ctx, summary.started_at):
        return None
    if not mark_asked(ctx, name):
        return None
    reason = REASON.format(tool_uses=summary.tool_uses, edits=summary.edits)
    return {"decision": "block", "reason": reason}
