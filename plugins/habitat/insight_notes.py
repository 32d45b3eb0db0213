"""Insight notes: an approved learning as a markdown note a person reads and decides on.

Where: ``resources/concepts/insights/<slug>.md`` (``INSIGHT_FOLDER``). An insight is a
piece of durable knowledge the agents learned and the operator approved: reference
material of the vault (PARA's resources), one idea per note, so it lives with the
concepts, in a folder of its own that a person opens in Obsidian as one list. Not in
``_agent/memory/semantic``, where it would seem at home: ``load --brief`` lists every
semantic note under Fact / Pattern, so every insight would be in every session's brief,
not the 5 that match it within 500 tokens. Being in the concept kind's folder, each
note is an entity of kind ``concept`` (its frontmatter complete for the kind, so
``lint`` is satisfied) and in the recall corpus. Each links to the hub note
``habitat-insights`` (``HUB_PATH``, written once), so neither is an orphan for ``lint``.

The note (``render_insight``)::

    ---
    type: concept
    status: approved            <- the operator's switch: approved | rejected | pending
    created / updated / tags
    learning_id: "3f9a2c01"     <- which learning of the store it is
    learning_type, recurrence, agents, approved
    project: "alphaproj"        <- the project it was learned in, when known (none: every
    ---                            project's sessions may get it)
    # <title: the learning's first words>

    <the learning's text>       <- what agents get at session start (``insight_text``)

    ## Provenance / ## Review / ## Related

A person approves or rejects by editing ``status`` (and may add ``reason:``); the store
follows at its next sync (``insight_sync``). Approving again empties an old ``reason``
(it said why the insight was withdrawn). ``project`` scopes the insight: only sessions of
that project get it (``insight_context``); a person may change or delete the line. The
file name is a slug of the title without redaction markers (``[REDACTED:<rule>]``).
Every write goes through the core's note verbs (``put``, ``fm`` via ``echo_core.invoke``:
the vault lock, the note history, the recall index, the outbox when the vault is
unreachable), then ``echo_core.sync_paths`` for the entity index.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Sequence
from typing import Any

from plugins.habitat.learnings import Learning, Provenance

__all__ = ["HUB_PATH", "INSIGHT_FOLDER", "NOTE_STATUSES", "insight_text", "note_status_of",
           "render_insight", "write_insight"]

INSIGHT_FOLDER = "resources/concepts/insights"
HUB_SLUG = "habitat-insights"
HUB_PATH = f"resources/concepts/{HUB_SLUG}.md"
#: The statuses an insight note's ``status`` may hold, and the store state each means.
NOTE_STATUSES = {"approved": "approved", "rejected": "rejected", "pending": "pending"}
#: Most provenance lines a note lists (the rest are counted).
MAX_PROVENANCE = 10
TITLE_CHARS = 80
SLUG_CHARS = 60
PROVENANCE_HEADING = "## Provenance"
#: What a redaction leaves in a text (``echo_core.redact``): no part of a file name.
_REDACTION_RE = re.compile(r"\[REDACTED:[^\]\s]*\]")

_HUB_TEXT = """---
type: concept
status: active
created: {day}
updated: {day}
tags: [concept, habitat]
---
# Habitat insights

What the agents of the habitat learned and the operator approved: one note per insight
in `insights/` beside this note, each linking here (see the backlinks). At the start of
a session, agents get the approved insights that match what they are working on. An
insight with a `project:` line is given only to sessions of that project (the
repository's folder name); delete the line to give it to every project.

To withdraw an insight, open it and set `status: rejected` (add `reason: ...` to say
why); `status: pending` sends it back to review. `echo-memory habitat learnings` lists
every learning, `echo-memory habitat approve ID` approves one.
"""


def note_status_of(state: str) -> str:
    """The ``status`` an insight note shows for a learning in ``state``."""
    if state == "approved":
        return "approved"
    return "rejected" if state in ("rejected", "demoted-rejected") else "pending"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def insight_title(content: str) -> str:
    """The note's title: the learning's first line, cut at a word to ``TITLE_CHARS``."""
    first = " ".join(content.strip().splitlines()[0].split()) if content.strip() else ""
    first = first.lstrip("#").strip() or "Insight"
    if len(first) <= TITLE_CHARS:
        return first
    cut = first[: TITLE_CHARS - 1].rsplit(" ", 1)[0].rstrip(" ,;:.-")
    return (cut or first[: TITLE_CHARS - 1]) + "…"


def _provenance_lines(provenance: Sequence[Provenance]) -> list[str]:
    lines = []
    for p in provenance[:MAX_PROVENANCE]:
        who = p.agent_id + (f" (session {p.session_id})" if p.session_id else "")
        why = f": {' '.join(p.rationale.split())}" if p.rationale.strip() else ""
        lines.append(f"- {p.ts[:10]} {who}{why}")
    if len(provenance) > MAX_PROVENANCE:
        lines.append(f"- … and {len(provenance) - MAX_PROVENANCE} more")
    return lines


def _body_text(content: str) -> str:
    """The learning's text as note body: a line that would read as a heading is escaped
    (it would end the insight's text)."""
    return "\n".join("\\" + line if line.lstrip().startswith("#") else line
                     for line in content.strip().splitlines())


def render_insight(learning: Learning, provenance: Sequence[Provenance],
                   day: _dt.date, project: str = "") -> str:
    """The whole text of the insight note of ``learning`` (module docstring), scoped to
    ``project`` when given."""
    agents = list(dict.fromkeys(p.agent_id for p in provenance)) or [learning.agent_id]
    tags = list(dict.fromkeys(("concept", "insight", "habitat", *learning.tags)))
    front = [
        "---", "type: concept", "status: approved", f"created: {day.isoformat()}",
        f"updated: {day.isoformat()}", f"tags: {_json(tags)}",
        f"learning_id: {_json(learning.id)}", f"learning_type: {_json(learning.type)}",
        f"recurrence: {learning.recurrence}", f"agents: {_json(agents)}",
        f"approved: {day.isoformat()}",
        *([f"project: {_json(project)}"] if project else []), "---",
    ]
    scope = (f" Only sessions of project {project} get it (delete the `project:` line to "
             "give it to every project).") if project else ""
    body = [f"# {insight_title(learning.content)}", "", _body_text(learning.content), "",
            PROVENANCE_HEADING, *_provenance_lines(provenance), "", "## Review",
            (f"Approved on {day.isoformat()} (recurrence {learning.recurrence}). To "
             "withdraw it, set `status: rejected` above and add `reason: ...`; "
             "`status: pending` sends it back to review. Agents stop getting it at their "
             "next session start." + scope), "", "## Related", f"- [[{HUB_SLUG}]]", ""]
    return "\n".join(front + body)


def insight_text(body: str) -> str:
    """What an insight note says, from its body: the text between its title and its
    first ``## `` heading (the person may have edited it), heading escapes removed;
    "" when empty."""
    lines = body.splitlines()
    out: list[str] = []
    started = False
    for line in lines:
        if line.startswith("## "):
            break
        if not started and line.startswith("# "):
            started = True
            continue
        out.append(line[1:] if line.startswith("\\#") else line)
    return "\n".join(out).strip()


def _slug(learning: Learning) -> str:
    """The file name's slug: the title of the text without its redaction markers."""
    from echo_core import EchoError, slugify

    unmarked = _REDACTION_RE.sub(" ", learning.content)
    if not unmarked.strip():
        return f"insight-{learning.id}"
    try:
        return slugify(insight_title(unmarked).rstrip("…"), max_len=SLUG_CHARS)
    except EchoError:  # no letter or digit: emoji, punctuation
        return f"insight-{learning.id}"


def _free_path(ctx: Any, learning: Learning) -> str:
    """A path in ``INSIGHT_FOLDER`` no other note holds (``-2``, ``-3``... appended)."""
    storage = ctx.vault.storage
    base = f"{INSIGHT_FOLDER}/{_slug(learning)}"
    path, n = f"{base}.md", 1
    while storage.exists(path):
        n += 1
        path = f"{base}-{n}.md"
    return path


def _ensure_hub(ctx: Any) -> bool:
    """Write the hub note when the vault has none; True when it was queued."""
    from echo_core import invoke

    if ctx.vault.storage.exists(HUB_PATH):
        return False
    envelope = invoke(ctx, "put", {"path": HUB_PATH,
                                   "text": _HUB_TEXT.format(day=ctx.today().isoformat())})
    return _settled(ctx, envelope, HUB_PATH)


def _settled(ctx: Any, envelope: Any, path: str) -> bool:
    """After a write of ``path``: the entity index made to agree with it (``put`` and
    ``fm`` write the note and its recall entry only). True when the write was queued
    (the vault unreachable): nothing to index yet."""
    from echo_core import sync_paths

    if str(envelope.action) == "queued":
        return True
    sync_paths(ctx, [path])
    return False


def write_insight(ctx: Any, learning: Learning, provenance: Sequence[Provenance],
                  status: str, reason: str = "", project: str = "") -> tuple[str, bool]:
    """Write the insight note of ``learning`` with ``status``: a new note (scoped to
    ``project`` when given) when it has none in the vault, else its ``status`` (and
    ``reason`` when given; an old ``reason`` emptied when the status is not
    ``rejected``) and ``updated`` set, one line each, unless it says so already. Returns
    ``(path, queued)``: ``queued`` when the vault was unreachable and the write waits in
    the outbox."""
    from echo_core import invoke

    storage = ctx.vault.storage
    path = learning.insight_path
    if path and storage.exists(path):
        queued = False
        front = ctx.vault.read_note(path).frontmatter
        old_reason = str(front.get("reason") or "")
        if status != "rejected" and old_reason:
            reason = ""  # why it was withdrawn: said no more once it is approved again
        elif not reason:
            reason = old_reason
        if str(front.get("status") or "") == status and old_reason == reason:
            return path, False  # it says so already: nothing to write
        changes: list[tuple[str, Any]] = [("status", status),
                                          ("updated", ctx.today())]
        if reason != old_reason:
            changes.append(("reason", reason))
        for key, value in changes:
            envelope = invoke(ctx, "fm", {"path": path, "key": key, "value": value})
            queued = queued or str(envelope.action) == "queued"
        if not queued:
            _settled(ctx, envelope, path)
        return path, queued
    queued = _ensure_hub(ctx)
    path = _free_path(ctx, learning)
    text = render_insight(learning, provenance, ctx.today(), project.strip())
    if status != "approved":
        text = text.replace("\nstatus: approved\n", f"\nstatus: {status}\n", 1)
    envelope = invoke(ctx, "put", {"path": path, "text": text})
    return path, _settled(ctx, envelope, path) or queued
