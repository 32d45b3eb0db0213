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
* Vault away (unmounted folder, server down): capture queues the checkpoint in the outbox
  like any capture. A later compaction first replays the outbox (``replay_waiting``) and,
  while the vault is still away, queues an extension when a create of the same title
  already waits (``checkpoint_known``): one note per session and day, never a ``-2``.
* Body: one summary line, then ``Recent prompts`` (the last ``MAX_PROMPTS``) and ``Files
  edited`` (the last ``MAX_FILES``, relative to ``cwd`` when inside it). Deterministic for
  a given transcript, payload and date. Nothing is written when the transcript has
  neither prompts nor edits.
* Redaction (SPEC §2.1): capture redacts the body; a prompt or instruction cut to one
  line is redacted before the cut, so no fragment of a secret survives it.
* Links: capture links the checkpoint to the entities it names (the people, projects in
  the prompts), never the other way round: durable notes do not collect links to
  working notes that expire.
* After the compaction, SessionStart (source ``compact``) shows the session's latest
  checkpoint (``latest_checkpoint``) above the brief.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from typing import Any

from plugins.hooks_claude.transcript import TranscriptSummary, one_line, read_transcript

_LATER_ENTRY = re.compile(r"- \d{4}-\d{2}-\d{2}: (Checkpoint before context compaction.*)")
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
        from echo_core import redact

        lines.append(f"Compaction instructions: {one_line(redact(instructions).text)}")
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
    from echo_core import invoke, replay_waiting, slugify

    ctx = make_ctx()
    replay_waiting(ctx)  # a checkpoint queued while the vault was away lands first
    title = checkpoint_title(ctx.today(), payload.get("session_id"))
    exists = checkpoint_known(ctx, slugify(title), title)
    envelope = invoke(ctx, "capture", {"title": title, "kind": KIND, "tags": tuple(TAGS),
                                       "body": checkpoint_body(payload, summary),
                                       "force": not exists})
    path = getattr(envelope.data, "path", None)
    return path if envelope.ok and isinstance(path, str) else None


def checkpoint_known(ctx: Any, slug: str, title: str) -> bool:
    """Whether the checkpoint note ``slug`` exists, or will: with the vault unreachable,
    whether a capture of ``title`` waits in the outbox (it creates the note on replay, so
    this one must extend it, not create a second: ``force`` is off). Unreachable with
    none waiting: False (capture queues a create)."""
    from echo_core import BackendUnavailable

    try:
        return ctx.entity_names.get(slug) is not None
    except BackendUnavailable:
        queue = ctx.queue
        return queue is not None and any(
            record.get("op") == "capture" and isinstance(record.get("args"), dict)
            and record["args"].get("title") == title for record in queue.pending())


def checkpoint_title(day: _dt.date, session_id: Any) -> str:
    """The title of the checkpoint note of ``session_id`` made on ``day``."""
    return f"{day.isoformat()} checkpoint {session8(session_id)}"


def latest_entry(text: str) -> str:
    """The newest checkpoint in a checkpoint note's text: the last dated entry under its
    log heading (indentation removed), else the body under the title."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":  # frontmatter
        ends = [i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"]
        lines = lines[ends[0] + 1:] if ends else lines
    first: list[str] = []
    latest: list[str] = []
    in_body, in_entry = True, False
    for line in lines:
        if line.startswith("## "):
            in_body = in_entry = False
        elif in_body:
            if not line.startswith("# "):
                first.append(line)
        elif match := _LATER_ENTRY.fullmatch(line):
            latest, in_entry = [match.group(1)], True
        elif in_entry and line.startswith("  "):
            latest.append(line[2:])
        else:
            in_entry = False
    return "\n".join(latest or first).strip()


def latest_checkpoint(ctx: Any, session_id: Any) -> tuple[str, str] | None:
    """``(path, text)`` of the newest checkpoint of ``session_id`` (today's note, else
    yesterday's: a compaction just after midnight), or None when it has none."""
    from echo_core import slugify

    today = ctx.today()
    index = ctx.entity_names
    for day in (today, today - _dt.timedelta(days=1)):
        entity = index.get(slugify(checkpoint_title(day, session_id)))
        if entity is not None and ctx.vault.storage.exists(entity.path):
            entry = latest_entry(ctx.vault.storage.read(entity.path))
            if entry:
                return entity.path, entry
    return None
