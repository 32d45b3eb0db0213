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
  like any capture. Vault lock held by another process (a sweep, a long capture): the
  hook waits ``LOCK_WAIT`` seconds for it, not capture's long wait, then queues the
  checkpoint itself (``queue_checkpoint``), so compaction is not held back and the next
  ``load`` or ``flush`` lands it. A later compaction first replays the outbox
  (``replay_waiting``); while a capture of the same title still waits there, it queues
  an extension behind it instead of writing (``waiting_in_outbox``).
* One note per session and day, never a ``-2``: ``force`` is off whenever the note is
  known (``checkpoint_known``): indexed, or its file already at its path (a run cut
  after writing the note but before indexing it: capture adopts the file), or its
  create waiting in the outbox.
* Body: one summary line, then ``Recent prompts`` (the last ``MAX_PROMPTS``) and ``Files
  edited`` (the last ``MAX_FILES``, relative to ``cwd`` when inside it). Deterministic for
  a given transcript, payload and date. Nothing is written when the transcript has
  neither prompts nor edits.
* Redaction (SPEC §2.1): capture redacts the body; a prompt or instruction cut to one
  line is redacted before the cut, so no fragment of a secret survives it.
* Safe text (``shown``): every field is one line; a lone surrogate (undecodable input,
  half an emoji) becomes U+FFFD and control characters (NUL, ESC, BEL, bidi overrides
  such as U+202E, line breaks in ``cwd``) are shown escaped (``\\x1b``, ``\\u202e``):
  the note is re-injected into the session after the compaction.
* Links: capture links the checkpoint to the entities it names (the people, projects in
  the prompts), never the other way round: durable notes do not collect links to
  working notes that expire.
* After the compaction, SessionStart (source ``compact``) shows the session's latest
  checkpoint (``latest_checkpoint``) above the brief.
"""

from __future__ import annotations

import contextlib
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
#: Seconds the hook waits for another process's vault lock before queueing instead.
LOCK_WAIT = 2.0


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


def shown(text: str) -> str:
    """``text`` as one safe line of a checkpoint: lone surrogates replaced by U+FFFD,
    every control character (line breaks and tabs too) shown as an escape."""
    from echo_core import terminal_safe, with_valid_text

    return terminal_safe(str(with_valid_text(text)), one_line=True)


def checkpoint_body(payload: dict[str, Any], summary: TranscriptSummary) -> str:
    """The checkpoint text for one compaction (module docstring)."""
    trigger = payload.get("trigger")
    trigger = shown(trigger) if isinstance(trigger, str) else "unknown"
    cwd = payload.get("cwd")
    where = f" in {shown(cwd)}" if isinstance(cwd, str) and cwd else ""
    lines = [(f"Checkpoint before context compaction ({trigger}) of Claude Code session "
              f"{session8(payload.get('session_id'))}{where}: {len(summary.prompts)} prompts, "
              f"{summary.tool_uses} tool uses, {len(summary.edited_files)} files edited.")]
    instructions = payload.get("custom_instructions")
    if isinstance(instructions, str) and instructions.strip():
        from echo_core import redact

        lines.append(f"Compaction instructions: {shown(one_line(redact(instructions).text))}")
    if summary.prompts:
        recent = summary.prompts[-MAX_PROMPTS:]
        lines.append(f"Recent prompts (last {len(recent)} of {len(summary.prompts)}):")
        lines += [f"- {shown(prompt)}" for prompt in recent]
    if summary.edited_files:
        files = summary.edited_files[-MAX_FILES:]
        lines.append(f"Files edited ({len(summary.edited_files)}):")
        lines += [f"- {shown(_relative(path, cwd))}" for path in files]
        if len(summary.edited_files) > len(files):
            lines.append(f"- … and {len(summary.edited_files) - len(files)} earlier")
    return "\n".join(lines)


def write_checkpoint(payload: dict[str, Any], make_ctx: Any) -> str | None:
    """Write (or extend) today's checkpoint note for the session; its vault path, or None
    when there was nothing to keep, the vault is not initialised, or the checkpoint was
    queued (vault away, lock held: module docstring) or capture did not write. Holds the
    vault lock (waiting at most ``LOCK_WAIT``) from the outbox replay to the capture, so
    neither waits on it again. Errors: capture's (the hook stays quiet)."""
    summary = read_transcript(payload.get("transcript_path"))
    if not summary.prompts and not summary.edited_files:
        return None
    from echo_core import (
        MARKER_PATH,
        BackendUnavailable,
        EchoError,
        ExitCode,
        invoke,
        replay_waiting,
    )

    ctx = make_ctx()
    title = checkpoint_title(ctx.today(), payload.get("session_id"))
    body = checkpoint_body(payload, summary)
    storage = ctx.vault.storage
    with contextlib.ExitStack() as held:
        try:
            if not storage.exists(MARKER_PATH):
                return None  # not a vault (capture refuses it): no lock file left in it
            held.enter_context(storage.lock(timeout=LOCK_WAIT))
        except BackendUnavailable:
            pass  # the vault is away: capture queues the checkpoint
        except EchoError as error:  # a backend may raise plain 75, not LockHeldError
            if error.code != ExitCode.LOCK_HELD:
                raise
            queue_checkpoint(ctx, title, body, force=not checkpoint_known(ctx, title))
            return None
        replay_waiting(ctx)  # a checkpoint queued while away or locked out lands first
        if waiting_in_outbox(ctx, title):  # its create replays first; this extends it
            queue_checkpoint(ctx, title, body, force=False)
            return None
        envelope = invoke(ctx, "capture", {"title": title, "kind": KIND, "tags": tuple(TAGS),
                                           "body": body,
                                           "force": not checkpoint_known(ctx, title)})
    path = getattr(envelope.data, "path", None)
    return path if envelope.ok and isinstance(path, str) else None


def checkpoint_known(ctx: Any, title: str) -> bool:
    """Whether the checkpoint note ``title`` exists, or will, so capture must extend it
    (``force`` off) rather than create a second: the entity index has it, its file is at
    its path (``checkpoint_path``; written by a run cut before indexing it), or a capture
    of ``title`` waits in the outbox (it creates the note on replay). With the vault
    unreachable, only the outbox is asked."""
    from echo_core import BackendUnavailable, slugify

    if waiting_in_outbox(ctx, title):
        return True
    try:
        return (ctx.entity_names.get(slugify(title)) is not None
                or ctx.vault.storage.exists(checkpoint_path(ctx, title)))
    except BackendUnavailable:
        return False


def waiting_in_outbox(ctx: Any, title: str) -> bool:
    """Whether a capture of ``title`` waits in the outbox (False without an outbox)."""
    queue = ctx.queue
    return queue is not None and any(
        record.get("op") == "capture" and isinstance(record.get("args"), dict)
        and record["args"].get("title") == title for record in queue.pending())


def checkpoint_path(ctx: Any, title: str) -> str:
    """The vault path capture gives the checkpoint note ``title`` when it creates it."""
    from echo_core import slugify

    return f"{ctx.manifest.route(KIND).folder_for()}/{slugify(title)}.md"


def queue_checkpoint(ctx: Any, title: str, body: str, *, force: bool) -> None:
    """Put the capture of the checkpoint in the outbox as capture queues one (validated,
    redacted, one record; ``flush`` and ``load`` replay it through capture). Errors:
    ``BackendUnavailable`` when there is no outbox to keep it in."""
    from echo_core import CaptureRequest, queue_capture_for_later

    queue_capture_for_later(ctx, CaptureRequest(title=title, kind=KIND, tags=TAGS, body=body,
                                                force=force),
                            "the vault lock is held by another process")


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
