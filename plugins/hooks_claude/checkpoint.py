"""The PreCompact checkpoint: a short, extractive working-memory note (no LLM).

Before Claude Code compacts a session's context, the last user prompts and the files
edited (both from the transcript) are kept in a ``working`` note written through
``capture``, so routing, the entity index, the recall index and the daily Agent Log stay
consistent, and the note expires like any working memory.

* Title ``"<today> checkpoint <session8>"`` -> ``_agent/memory/working/<today>-checkpoint-
  <session8>.md`` (``session8`` = the first 8 safe characters of the session id).
* First compaction of the day: created (``force``: the duplicate gate would otherwise see
  other sessions' checkpoints as near duplicates). Later ones: the same title resolves to
  the note, so capture appends a dated bullet with the new checkpoint (no gate, no alias
  telemetry).
* Body: one summary line, then ``Recent prompts`` (the last ``MAX_PROMPTS``) and ``Files
  edited`` (the last ``MAX_FILES``, relative to ``cwd`` when inside it). Deterministic for
  a given transcript, payload and date. Nothing is written when the transcript has
  neither prompts nor edits.
"""

from __future__ import annotations

import os
import re
from typing import Any

from plugins.hooks_claude.transcript import TranscriptSummary, one_line, read_transcript

MAX_PROMPTS = 5
MAX_FILES = 20
KIND = "working"
TAGS = ("checkpoint", "claude-code")


def session8(session_id: Any) -> str:
    """The first 8 letters/digits of the session id (``session`` when there is none)."""
    text = re.sub(r"[^A-Za-z0-9]", "", session_id) if isinstance(session_id, str) else ""
    return text[:8].lower() or "session"


def _relative(path: str, cwd: Any) -> str:
    if isinstance(cwd, str) and cwd and os.path.isabs(path):
        try:
            rel = os.path.relpath(path, cwd)
        except ValueError:  # another drive on Windows
            return path
        if not rel.startswith(".."):
            return rel.replace(os.sep, "/")
    return path


def checkpoint_body(payload: dict[str, Any], summary: TranscriptSummary) -> str:
    """The checkpoint text for one compaction (module docstring)."""
    trigger = payload.get("trigger") if isinstance(payload.get("trigger"), str) else "unknown"
    cwd = payload.get("cwd")
    where = f" in {cwd}" if isinstance(cwd, str) and cwd else ""
    lines = [(f"Checkpoint before context compaction ({trigger}) of Claude Code session "
              f"{session8(payload.get('session_id'))}{where}: {len(summary.prompts)} prompts, "
              f"{summary.tool_uses} tool uses, {len(summary.edited_files)} files edited.")]
    instructions = payload.get("custom_instructions")
    if isinstance(instructions, str) and instructions.strip():
        lines.append(f"Compaction instructions: {one_line(instructions)}")
    if summary.prompts:
        recent = summary.prompts[-MAX_PROMPTS:]
        lines.append(f"Recent prompts (last {len(recent)} of {len(summary.prompts)}):")
        lines += [f"- {prompt}" for prompt in recent]
    if summary.edited_files:
        files = summary.edited_files[-MAX_FILES:]
        lines.append(f"Files edited ({len(summary.edited_files)}):")
        lines += [f"- {_relative(path, cwd)}" for path in files]
        if len(summary.edited_files) > len(files):
            lines.append(f"- … and {len(summary.edited_files) - len(files)} earlier")
    return "\n".join(lines)


def write_checkpoint(payload: dict[str, Any], make_ctx: Any) -> str | None:
    """Write (or extend) today's checkpoint note for the session; its vault path, or None
    when there was nothing to keep or capture did not write."""
    summary = read_transcript(payload.get("transcript_path"))
    if not summary.prompts and not summary.edited_files:
        return None
    from echo_core import invoke, slugify

    ctx = make_ctx()
    title = f"{ctx.today().isoformat()} checkpoint {session8(payload.get('session_id'))}"
    exists = ctx.entities.load().get(slugify(title)) is not None
    envelope = invoke(ctx, "capture", {"title": title, "kind": KIND, "tags": tuple(TAGS),
                                       "body": checkpoint_body(payload, summary),
                                       "force": not exists})
    path = getattr(envelope.data, "path", None)
    return path if envelope.ok and isinstance(path, str) else None
