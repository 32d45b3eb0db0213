"""``history <path>`` and ``restore <path> <version>`` (SPEC §5.6).

The versions themselves are kept by ``Vault`` through ``EchoContext.history``
(``echo_core.history``): the prior text of every note write that replaces a different
text, and of every delete. A restore is an ordinary note write, so the text it replaces
becomes a version too (a restore can be undone by restoring that version).
"""

from __future__ import annotations

import contextlib
import difflib
from typing import TYPE_CHECKING

import attrs

from echo_core import digests
from echo_core.actions import Action
from echo_core.edit_retry import planned_again_if_edited
from echo_core.entities import content_hash
from echo_core.errors import EchoError, ExitCode, not_found
from echo_core.history import Version
from echo_core.models import Envelope, Note
from echo_core.notes import parse_note
from echo_core.operations.spelling import spell
from echo_core.paths import normalize_path
from echo_core.protocols import BackendUnavailable
from echo_core.write_scope import require_note_path

if TYPE_CHECKING:
    from echo_core.context import EchoContext


@attrs.frozen
class HistoryResult:
    """The kept versions of ``path``, newest first; ``exists``: the note is there now."""

    path: str
    versions: tuple[Version, ...]
    exists: bool


def _exists(ctx: EchoContext, path: str) -> bool:
    try:
        return ctx.vault.storage.exists(path)
    except BackendUnavailable:
        raise
    except EchoError:
        return False


def note_history(ctx: EchoContext, path: str) -> Envelope[HistoryResult]:
    """List the kept versions of the note at ``path`` (newest first). Reads only.

    Errors: 2 for a bad path; 44 naming the path when it has no versions and no note.
    A note that exists but was never overwritten lists no versions (``ok``)."""
    clean = normalize_path(path)
    versions = tuple(ctx.history.versions(clean))
    exists = _exists(ctx, clean)
    if not versions and not exists:
        raise not_found(f"no note and no history at {clean!r}; check the path "
                        "(`echo-memory ls` lists the vault)")
    if versions:
        message = f"{len(versions)} earlier version(s) of {clean}, newest first"
    else:
        message = f"{clean}: no earlier versions kept yet (one is kept whenever it is overwritten)"
    return Envelope(True, Action.LISTED, message, HistoryResult(clean, versions, exists))


@attrs.frozen
class RestoreResult:
    """A restore (or its preview): the unified ``diff`` from the current text to the
    version's; ``restored`` is True only when the note was written."""

    path: str
    version_id: str
    saved_at: str
    diff: str
    restored: bool


def unified_diff(path: str, current: str | None, version: Version, text: str) -> str:
    """The unified diff turning ``current`` (None: no note) into ``text``."""
    lines = difflib.unified_diff(
        (current or "").splitlines(keepends=True), text.splitlines(keepends=True),
        fromfile=f"{path} (current)" if current is not None else f"{path} (absent)",
        tofile=f"{path} @ {version.version_id} ({version.saved_at})")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def _current(ctx: EchoContext, path: str) -> str | None:
    try:
        return ctx.vault.storage.read(path)
    except EchoError as exc:
        if exc.code == ExitCode.NOT_FOUND:
            return None
        raise


#: The ``version`` that means the newest kept text differing from the note's current one.
PREVIOUS = "previous"


def _chosen(ctx: EchoContext, path: str, version_id: str) -> Version:
    """The version ``version_id`` names: ``previous`` is the newest kept text other than
    the note's current one (so restoring it twice toggles back); anything else an id or
    prefix. Errors: 44 as ``History.find``, or when no kept text differs from the note."""
    if version_id.strip().lower() != PREVIOUS:
        return ctx.history.find(path, version_id)
    current = _current(ctx, path)
    now = None if current is None else digests.sha256(current.encode("utf-8")).hexdigest()
    versions = ctx.history.versions(path)
    for version in versions:
        if version.sha != now:
            return version
    if not versions:
        ctx.history.find(path, version_id)  # raises the "no history" error
    raise not_found(f"no earlier version of {path!r} differs from its current text; "
                    f"run `echo-memory history {path}`")


def restore_note(ctx: EchoContext, path: str, version_id: str, *, confirm: bool) -> Envelope[RestoreResult]:
    """Restore ``path`` to the kept version ``version_id`` (an id, a unique prefix of at
    least 4 hex digits, or ``previous``: the newest kept text other than the current one).

    Without ``confirm``: a preview (action ``preview``) with the diff; nothing changes.
    With it: the note is written under the vault lock (action ``restored``; the text it
    replaces is kept as a new version) within the write scope of note verbs
    (``write_scope``: never the vault marker), and an entity's index entry follows the
    restored text (title, aliases). The same text: action ``unchanged``.
    Errors: 2 for a bad path; 44 naming the path (no history) or the version."""
    clean = require_note_path(path) if confirm else normalize_path(path)
    version = _chosen(ctx, clean, version_id)
    text = ctx.history.text(clean, version)
    def restore_once() -> str | None:
        current = _current(ctx, clean)
        if confirm and current != text:  # a person's save meanwhile: kept, then restored
            ctx.vault.update_note(clean, text, current)
        return current

    with ctx.vault.storage.lock() if confirm else contextlib.nullcontext():
        current = planned_again_if_edited(restore_once)
        diff = unified_diff(clean, current, version, text)
        write = confirm and current != text
        warnings: tuple[str, ...] = ()
        if write:
            warnings = reindex_entity(ctx, clean, text)
    result = RestoreResult(clean, version.version_id, version.saved_at, diff, write)
    which = f"version {version.version_id} ({version.saved_at})"
    if current == text:
        return Envelope(True, Action.UNCHANGED, f"{clean} already has the text of {which}; "
                        "nothing to restore", result)
    if not confirm:
        return Envelope(True, Action.PREVIEW, f"preview only: run again with "
                        f"{spell('confirm')} to restore {clean} to {which}", result)
    undo = (" (the text it replaced is kept as a version: `echo-memory history` lists it)"
            if current is not None else "")
    return Envelope(True, Action.RESTORED, f"restored {clean} to {which}{undo}", result,
                    warnings)


def _frontmatter_aliases(note: Note) -> tuple[str, ...]:
    raw = note.frontmatter.get("aliases") or []
    items = raw if isinstance(raw, list) else [raw]
    return tuple(dict.fromkeys(str(a).strip() for a in items if str(a).strip()))


def reindex_entity(ctx: EchoContext, path: str, text: str) -> tuple[str, ...]:
    """Bring the entity index entry of the note at ``path`` (if it is an entity) in line
    with its (restored or patched) ``text``: title (first heading), aliases (frontmatter) and hash. An
    alias that names another entity is left out of the index (one name, one note) and
    reported in the returned warnings. Caller holds the vault lock."""
    index = ctx.entity_names  # synced at its first lookup, under the caller's lock
    entity = index.by_path(path)
    if entity is None:
        return ()
    note = parse_note(path, text)
    kept: list[str] = []
    warnings: list[str] = []
    for alias in _frontmatter_aliases(note):
        other = next((e for e in index.exact(alias) if e.slug != entity.slug), None)
        if other is None:
            kept.append(alias)
        else:
            warnings.append(f"alias {alias!r} of the restored note also names {other.kind} "
                            f"{other.title!r} ({other.path}); it is not indexed for "
                            f"{entity.slug}: remove it from one of the two notes")
    updated = attrs.evolve(entity, title=note.title, aliases=tuple(kept), h=content_hash(text))
    if updated != entity:
        ctx.entities.record(puts=[updated])
    return tuple(warnings)
