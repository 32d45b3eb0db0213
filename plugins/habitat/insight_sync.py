"""Reading the insight notes back: a person's edit of ``status`` updates the store.

When: before every habitat verb that reads or decides learnings (``habitat learnings``,
``approve``, ``reject``, ``insights``, the SessionStart injection; ``habitat learn``
does not, it never reads the vault). It lists ``insight_notes.INSIGHT_FOLDER``, reads
each note and compares its ``status`` with ``note_status``, the status the habitat last
wrote there or read from it:

* different: a person changed it. ``approved`` / ``rejected`` / ``pending`` (any case)
  becomes the learning's state (a rejection's reason: the note's ``reason:``, else "set
  to rejected in <path>"); the new status is recorded. Any other value is reported and
  left alone.
* the same, but the store's state says otherwise: the habitat's own write did not land
  (the vault was down; the outbox may still hold it), so the store's state is written
  to the note again.
* a note whose ``learning_id`` the store does not know, or a second note of one
  learning, is reported and left alone.

The vault unreachable: nothing is synced, and the report says so; the store's states
stand. Sync never deletes a note nor a learning.
"""

from __future__ import annotations

from typing import Any

import attrs

from plugins.habitat.insight_notes import (
    INSIGHT_FOLDER,
    NOTE_STATUSES,
    insight_text,
    note_status_of,
)
from plugins.habitat.learnings import Learning, LearningStore

__all__ = ["InsightNote", "SyncReport", "projects_of", "read_insight_notes", "sync_insights"]


@attrs.frozen
class InsightNote:
    """One insight note as read: its path, the learning it names, its ``status`` (as
    written, stripped), the ``reason`` it gives, its text, the parsed ``Note`` and the
    ``projects`` its ``project`` names (one name, or a list of them; none: every
    project)."""

    path: str
    learning_id: str
    status: str
    reason: str
    text: str
    note: Any = attrs.field(eq=False, repr=False)
    projects: tuple[str, ...] = ()


@attrs.frozen
class SyncReport:
    """What a sync did: ``changed`` ("<id>: <before> -> <after> (<why>)" lines),
    ``problems`` (notes it could not use), the notes it read, and every learning of the
    store as the sync left it, by id."""

    changed: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    notes: tuple[InsightNote, ...] = attrs.field(default=(), repr=False)
    learnings: dict[str, Learning] = attrs.field(factory=dict, repr=False, eq=False)


def _scalar(value: Any) -> str:
    return "" if value is None else " ".join(str(value).split())


def projects_of(value: Any) -> tuple[str, ...]:
    """The project names a note's ``project`` value holds: one name, or a list of
    them; blanks dropped."""
    items = value if isinstance(value, (list, tuple)) else [value]
    names = (_scalar(item) for item in items if not isinstance(item, (dict, list)))
    return tuple(dict.fromkeys(name for name in names if name))


def read_insight_notes(ctx: Any) -> tuple[list[InsightNote], list[str]]:
    """Every note of the insight folder that names a learning, and the problems met.
    Raises ``BackendUnavailable`` when the vault cannot be listed."""
    storage = ctx.vault.storage
    paths = sorted(p for p in storage.list(INSIGHT_FOLDER)
                   if p.endswith(".md") and p.count("/") == INSIGHT_FOLDER.count("/") + 1)
    found: list[InsightNote] = []
    problems: list[str] = []
    for path in paths:
        try:
            note = ctx.vault.read_note(path)
        except Exception as exc:  # one unreadable note must not stop the rest
            from echo_core import BackendUnavailable

            if isinstance(exc, BackendUnavailable):
                raise
            problems.append(f"{path}: unreadable ({type(exc).__name__}: {exc})")
            continue
        if note.frontmatter_error:
            problems.append(f"{path}: frontmatter unreadable ({note.frontmatter_error})")
            continue
        learning_id = _scalar(note.frontmatter.get("learning_id"))
        if not learning_id:
            continue  # a note a person put there: not an insight of the habitat
        found.append(InsightNote(path, learning_id, _scalar(note.frontmatter.get("status")),
                                 _scalar(note.frontmatter.get("reason")),
                                 insight_text(note.body), note,
                                 projects_of(note.frontmatter.get("project"))))
    return found, problems


def sync_insights(ctx: Any, store: LearningStore) -> SyncReport:
    """Apply the insight notes' statuses to ``store`` (module docstring)."""
    from echo_core import BackendUnavailable, EchoError

    learnings = {x.id: x for x in store.list()}
    try:
        notes, problems = read_insight_notes(ctx)
    except (BackendUnavailable, EchoError) as exc:
        message = getattr(exc, "message", None) or str(exc)
        return SyncReport(problems=(f"insight notes not read: {message}",),
                          learnings=learnings)
    changed: list[str] = []
    seen: dict[str, str] = {}
    for item in notes:
        if item.learning_id in seen:
            problems.append(f"{item.path}: learning {item.learning_id} already has the note "
                            f"{seen[item.learning_id]}; this one is ignored")
            continue
        seen[item.learning_id] = item.path
        learning = learnings.get(item.learning_id)
        if learning is None:
            problems.append(f"{item.path}: no learning {item.learning_id} in the store")
            continue
        line = _sync_one(ctx, store, learning, item, problems)
        if line:
            changed.append(line)
            learnings[learning.id] = store.get(learning.id) or learning
    return SyncReport(tuple(changed), tuple(problems), tuple(notes), learnings)


def _sync_one(ctx: Any, store: LearningStore, learning: Learning, item: InsightNote,
              problems: list[str]) -> str | None:
    status = item.status.casefold()
    if status != learning.note_status:
        state = NOTE_STATUSES.get(status)
        if state is None:
            problems.append(f"{item.path}: status {item.status!r} is none of "
                            f"{', '.join(NOTE_STATUSES)}; left as it is")
            return None
        if note_status_of(learning.state) == status:
            store.note_written(learning.id, item.path, status)
            return None
        reason = None
        if state == "rejected":
            reason = item.reason or f"set to rejected in {item.path}"
        store.decide(learning.id, state, now=ctx.now(), reason=reason,
                     insight_path=item.path, note_status=status,
                     why=f"status {status} in {item.path}")
        return f"{learning.id}: {learning.state} -> {state} (edited in {item.path})"
    wanted = note_status_of(learning.state)
    if status != wanted and learning.state in ("approved", "rejected"):
        from plugins.habitat.insight_notes import write_insight

        path, _ = write_insight(ctx, attrs.evolve(learning, insight_path=item.path), (),
                                wanted, learning.reason if wanted == "rejected" else "")
        store.note_written(learning.id, path, wanted)
        return f"{learning.id}: note {path} set to {wanted} (the store's state)"
    return None
