"""``history <path>`` and ``restore <path> <version>`` (SPEC §5.6).

The versions themselves are kept by ``Vault`` through ``EchoContext.history``
(``echo_core.history``): the prior text of every note write that replaces a different
text, and of every delete. A restore is an ordinary note write, so the text it replaces
becomes a version too (a restore can be undone by restoring that version).

History follows a moved note (``lineage``). A note's file name is its name (``[[x]]``
names ``x.md`` wherever it is), and a move (sweep's decay moving a project, a person's
``mv``) keeps it. So the versions kept under another path of the same file name, where
no note is now, are the note's from before a move: ``history`` of the note lists them
with its own, and ``history`` of the old path lists them all too and names where the
note is now. A rename that changes the file name (a person's ``mv a.md b.md``,
Obsidian's rename) is followed the same way once the vault-change check has recorded it
(``ops.vault_changes``; ``NoteHistory.renamed``, through chains; the ``history`` verb runs
the check first, ``restore`` does not: its preview writes nothing): the paths renamed
into the note's, where no note is now, add their versions. Limit: a note renamed and edited
before the next command ran (its text no longer the recorded one), or renamed with
another note of the same text, is not followed (renamed, then deleted: the paths renamed
into its last one still are). ``restore`` never makes a second note of a name: at a path
with no note while the note is elsewhere (moved or renamed) it is refused (44, naming
that note), so the version is restored there instead (its versions include the old path's).

A note deleted by hand: versions are the texts writes replaced, so its last text is one
only when kept before. The check noticing the deletion records that text's hash
(``NoteHistory.deleted``; until then the manifest has it): ``history`` says whether it is
kept (``LastText``), ``previous`` restores it if so, and restoring another version warns.

A restore of a note that ``evolve`` archived versions of archives the text it replaces
the same way (``_agent/archive/``, ``superseded_at`` today, the reason naming the
version), so ``recall --as-of`` still answers with that text for the days it held.

``restore --base VERSION`` refuses a stale restore as ``evolve --base`` refuses a stale
edit (``ops.base_version``): ``VERSION`` is the note's version when the caller looked
(``history``'s ``current_version``); when a capture or an edit landed since (so
``previous`` may name another text than the one seen), nothing is written (exit 1).
"""

from __future__ import annotations

import contextlib
import difflib
import sqlite3
from collections.abc import Sequence
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
from echo_core.operations.spelling import current_surface, spell
from echo_core.ops.base_version import base_is_stale, changed_since, require_base
from echo_core.ops.evolve import archive_path, archived_version, archived_versions
from echo_core.ops.notes_io import note_version
from echo_core.ops.write_intent import StagedVault, commit, new_op_id, recover_pending
from echo_core.paths import normalize_path
from echo_core.protocols import BackendUnavailable
from echo_core.write_scope import require_note_path

if TYPE_CHECKING:
    from echo_core.context import EchoContext

#: The hex digits of a version id (``history.Version.version_id``).
_VERSION_ID = 12
_KEPT = "a version is kept when a write replaces a text, not when a note is deleted by hand"


@attrs.frozen
class LastText:
    """The last text of a note deleted by hand: ``version_id`` (its, were it kept), ``kept``
    (a version is it), ``noticed_at``: when a check noticed the deletion (None: not yet)."""

    version_id: str
    kept: bool
    noticed_at: str | None = None

    def gone(self, path: str) -> str:
        """How the note left ``path``, for messages."""
        return f"no note at {path}: " + (f"deleted by hand (noticed {self.noticed_at})"
                                         if self.noticed_at else "deleted or renamed by "
                                         "hand since the last command")

    def lost(self) -> str:
        """Why its last text is not listed, for messages."""
        return (f"its last text (version {self.version_id}) was not kept ({_KEPT}), so "
                "every kept version is an older text")


@attrs.frozen
class HistoryResult:
    """The kept versions of ``path``, newest first (each says the path it was kept
    for); ``exists``: the note is there now; ``moved_to``: where the note is now, when
    ``path`` has none (it was moved or renamed: ``lineage``); ``current_version``: the version of
    the note now (at ``moved_to`` when it moved; None when there is none), which
    ``restore --base`` takes to refuse a restore once the note has changed; ``deleted``:
    what is known of its last text when it was deleted (``LastText``), else None."""

    path: str
    versions: tuple[Version, ...]
    exists: bool
    moved_to: str | None = None
    current_version: str | None = None
    deleted: LastText | None = None


def _exists(ctx: EchoContext, path: str) -> bool:
    try:
        return ctx.vault.storage.exists(path)
    except BackendUnavailable:
        raise
    except EchoError:
        return False


@attrs.frozen
class Lineage:
    """The paths one note had: ``paths`` (``path`` first) are the rings its versions are
    in; ``exists``: a note is at ``path``; ``namesakes``: the other notes of ``path``'s
    file name now; ``moved_to``: the note's path now when ``path`` has none and the note
    was renamed to a path with a note now (recorded), or exactly one note of that name is
    elsewhere."""

    path: str
    paths: tuple[str, ...]
    exists: bool
    namesakes: tuple[str, ...] = ()
    moved_to: str | None = None


def _name(path: str) -> str:
    """The file name of ``path``: the note's name (``x.md``)."""
    return path.rsplit("/", 1)[-1]


def _notes_named(ctx: EchoContext, name: str, path: str) -> tuple[str, ...]:
    """The files of file name ``name`` in the vault now, other than ``path``."""
    return tuple(p for p in ctx.vault.storage.list("")
                 if p != path and _name(p) == name)


def lineage(ctx: EchoContext, path: str) -> Lineage:
    """The paths the note at ``path`` (or last at ``path``) had (module docstring): with
    a note at ``path``, the paths of its file name that have kept versions and no note
    now, unless another note of that name exists (then whose they were is unknown: only
    ``path``), then the paths renamed into ``path`` with no note now; with none there,
    the one note ``path`` was renamed to (through chains) that is there now, else the one
    note of that name elsewhere (``moved_to``), and that note's paths, else ``path`` and
    the paths renamed into it with no note now (renamed, then deleted). Reads the
    history's path and rename lists; lists the vault only when another path of the name
    has versions, or ``path`` has no note."""
    exists = _exists(ctx, path)
    if not exists:
        now = [p for p in ctx.history.renamed(path, forward=True) if _exists(ctx, p)]
        if len(now) == 1:
            return _moved(ctx, path, now[0], ())
    line = _by_name(ctx, path, exists)
    if not exists and (line.namesakes or line.paths[1:]):
        return line
    before = [p for p in ctx.history.renamed(path) if p not in line.paths and not _exists(ctx, p)]
    return attrs.evolve(line, paths=(*line.paths, *before)) if before else line


def _moved(ctx: EchoContext, path: str, now: str, namesakes: tuple[str, ...]) -> Lineage:
    """``path``'s lineage when it has no note and the note is at ``now``: ``path``, then
    ``now``'s."""
    ahead = lineage(ctx, now).paths
    return Lineage(path, tuple(dict.fromkeys((path, *ahead))), False, namesakes, now)


def _by_name(ctx: EchoContext, path: str, exists: bool) -> Lineage:
    """``lineage`` by file name alone (no renames)."""
    name = _name(path)
    others = [p for p in ctx.history.paths_named(name) if p != path]
    if exists and not others:
        return Lineage(path, (path,), True)
    namesakes = _notes_named(ctx, name, path)
    if namesakes:
        if exists or len(namesakes) > 1:
            return Lineage(path, (path,), exists, namesakes)
        return _moved(ctx, path, namesakes[0], namesakes)
    return Lineage(path, (path, *others) if exists else (path,), exists)


def note_history(ctx: EchoContext, path: str) -> Envelope[HistoryResult]:
    """List the kept versions of the note at ``path`` (newest first), following a move
    (``lineage``). Reads only.

    Errors: 2 for a bad path; 44 naming the path when it has no versions and no note.
    A note that exists but was never overwritten lists no versions (``ok``)."""
    clean = normalize_path(path)
    line = lineage(ctx, clean)
    versions = tuple(ctx.history.versions_of(line.paths))
    exists = line.exists
    last = _last_text(ctx, line, versions)
    if not versions and not exists:
        name = _name(clean).removesuffix(".md")
        moved = (f"; the note {name!r} is at {line.moved_to} ({_how(line)}): run "
                 f"`echo-memory history {line.moved_to}`" if line.moved_to else "")
        if last is not None:
            raise not_found(f"{last.gone(clean)}, and no text of it was kept ({_KEPT}); if "
                            "your editor moved it to a trash folder, restore it from there")
        raise not_found(f"no note and no history at {clean!r}{moved}; check the path "
                        "(`echo-memory ls` lists the vault)")
    before = [p for p in line.paths[1:] if p != line.moved_to]
    where = f" (with those kept at {', '.join(before)}, where it was before)" if before else ""
    if last is not None:
        which = (f"its last text is version {last.version_id}" if last.kept else last.lost())
        message = (f"{last.gone(clean)}; {len(versions)} earlier version(s) of it, newest "
                   f"first{where}; {which}")
    elif line.moved_to is not None:
        message = (f"no note at {clean}: it was {_how(line)} to {line.moved_to}; "
                   f"{len(versions)} earlier version(s) of it, newest first{where}; restore "
                   f"them at {line.moved_to}")
    elif versions:
        message = f"{len(versions)} earlier version(s) of {clean}, newest first{where}"
    else:
        message = f"{clean}: no earlier versions kept yet (one is kept whenever it is overwritten)"
    now = line.moved_to or (clean if exists else None)
    return Envelope(True, Action.LISTED, message,
                    HistoryResult(clean, versions, exists, line.moved_to,
                                  None if now is None else _version_now(ctx, now), last))


def _last_text(ctx: EchoContext, line: Lineage,
               versions: Sequence[Version] | None = None) -> LastText | None:
    """For ``line.path`` with no note and not moved: its last text (``LastText``) as the
    history's record of its deletion has it, unless a version of the path was kept since
    (the note came back), else as the manifest has it (no check since); None: unknown."""
    if line.exists or line.moved_to is not None:
        return None
    path = line.path
    versions = ctx.history.versions_of(line.paths) if versions is None else versions
    record = ctx.history.deleted(path)
    if record is not None and any(v.path == path and v.saved_at > record.at for v in versions):
        record = None
    digest = record.h if record is not None else _recorded_hash(ctx, path)
    if not digest:
        return None
    return LastText(digest[:_VERSION_ID], any(v.sha.startswith(digest) for v in versions),
                    None if record is None else record.at)


def _recorded_hash(ctx: EchoContext, path: str) -> str:
    """The hash the manifest records for ``path`` ("": none, or no manifest: not made here)."""
    from echo_core.ops.vault_changes import manifest_of

    manifest = manifest_of(ctx)
    with contextlib.suppress(sqlite3.Error):
        if manifest.path.exists() and (row := manifest.rows([path]).get(path)) is not None:
            return row[2]
    return ""


def _version_now(ctx: EchoContext, path: str) -> str | None:
    """The version of the note at ``path`` now; None when it cannot be read (gone, or
    not UTF-8: the listing stands without it)."""
    try:
        return note_version(ctx.vault.storage.read(path))
    except BackendUnavailable:
        raise
    except EchoError:
        return None


@attrs.frozen
class RestoreResult:
    """A restore (or its preview): the unified ``diff`` from the current text to the
    version's; ``restored`` is True only when the note was written; ``archive``: where
    the text it replaced was archived (a note with evolve's archived versions), else
    None; ``current_version``: the note's version before the restore (None: no note);
    ``base_stale``: a ``base`` was given and the note is another version now (a
    preview says so; a restore is refused)."""

    path: str
    version_id: str
    saved_at: str
    diff: str
    restored: bool
    archive: str | None = None
    current_version: str | None = None
    base_stale: bool = False


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


def _chosen(ctx: EchoContext, line: Lineage, version_id: str,
            last: LastText | None = None) -> Version:
    """The version ``version_id`` names among the versions of ``line``: ``previous`` is
    the note's last text when it was deleted by hand and that text is kept (``last``),
    else the newest kept text other than the note's current one (so restoring it twice
    toggles back); anything else an id or prefix. Errors: 44 as ``History.find``, or
    when no kept text differs from the note."""
    path = line.path
    if version_id.strip().lower() != PREVIOUS:
        return ctx.history.find(path, version_id, paths=line.paths)
    current = _current(ctx, path)
    now = None if current is None else digests.sha256(current.encode("utf-8")).hexdigest()
    versions = ctx.history.versions_of(line.paths)
    if current is None and last is not None and last.kept:
        return next(v for v in versions if v.version_id == last.version_id)
    for version in versions:
        if version.sha != now:
            return version
    if not versions:
        ctx.history.find(path, version_id)  # raises the "no history" error
    raise not_found(f"no earlier version of {path!r} differs from its current text; "
                    f"run `echo-memory history {path}`")


def _refuse_second_note(line: Lineage, version_id: str) -> None:
    """44 when restoring ``line.path`` would make a second note of its name (or a
    second copy of the note renamed from it)."""
    if line.exists or not (line.namesakes or line.moved_to):
        return
    name = _name(line.path).removesuffix(".md")
    if line.moved_to is not None:
        raise not_found(f"no note at {line.path}, and the note {name!r} is at "
                        f"{line.moved_to} ({_how(line)}): restore it there, `echo-memory restore "
                        f"{line.moved_to} {version_id}` (its history lists the versions kept "
                        f"at {line.path} too). Nothing was written")
    raise not_found(f"no note at {line.path}, and notes named {name!r} are at "
                    f"{', '.join(line.namesakes)}: restoring would make another; restore "
                    "one of them, or `get` the version's text and put it under another "
                    "name. Nothing was written")


def _how(line: Lineage) -> str:
    """``moved`` (the same file name) or ``renamed``: how the note left ``line.path``."""
    same = line.moved_to is None or _name(line.moved_to) == _name(line.path)
    return "moved" if same else "renamed"


def _write(ctx: EchoContext, path: str, current: str | None, text: str,
           version: Version) -> str | None:
    """Write ``text`` over ``current`` at ``path`` (caller holds the vault lock). When
    the note has archived versions (``ops.evolve.archived_versions``), ``current`` is
    archived as ``evolve`` archives, in one commit with the write; returns that archive
    path (else None)."""
    storage = ctx.vault.storage
    if current is None or not archived_versions(storage, path, current):
        ctx.vault.update_note(path, text, current)
        return None
    day = ctx.today()
    archive = archive_path(storage, path, day.isoformat())
    reason = f"restored version {version.version_id} ({version.saved_at})"
    vault = StagedVault(ctx)
    vault.update_note(archive, archived_version(current, path, reason, day), None)
    vault.write_note(path, text, prior=current)
    commit(ctx, vault, [], new_op_id())
    return archive


def _look_again(path: str) -> str:
    """What to do after a stale ``base``: list the versions again."""
    if current_surface() == "mcp":
        return (f"Call echo_note_history for {path} again and choose the version (and "
                "base) again")
    return f"Run `echo-memory history {path}` again and choose the version (and --base) again"


def restore_note(ctx: EchoContext, path: str, version_id: str, *, confirm: bool,
                 base: str | None = None) -> Envelope[RestoreResult]:
    """Restore ``path`` to the kept version ``version_id`` (an id, a unique prefix of at
    least 4 hex digits, or ``previous``: the newest kept text other than the current one)
    among the note's versions, kept at ``path`` or at the paths it had before a move
    (``lineage``). ``base``: the note's version when the caller looked (``history``'s
    ``current_version``, or a prefix of 4+ hex digits); None: not checked.

    Without ``confirm``: a preview (action ``preview``) with the diff; nothing changes.
    With it: the note is written under the vault lock (action ``restored``; the text it
    replaces is kept as a new version, and archived like evolve's when the note has
    archived versions: ``archive``) within the write scope of note verbs
    (``write_scope``: never the vault marker), and an entity's index entry follows the
    restored text (title, aliases). The same text: action ``unchanged``.
    Errors: 2 for a bad path; 44 naming the path (no history) or the version, or when
    ``path`` has no note and a note of its name is elsewhere (a moved note: the message
    names it; restore there); 1 with ``confirm`` when ``base`` is stale (nothing
    written; a preview only says so, ``base_stale``)."""
    clean = require_note_path(path) if confirm else normalize_path(path)
    archived: list[str | None] = [None]
    if confirm:  # a rename by hand since the last command is seen first (a preview
        from echo_core.ops.freshness import freshen_for  # writes nothing, not even that)

        freshen_for(ctx, "quick")

    with ctx.vault.storage.lock() if confirm else contextlib.nullcontext():
        line = lineage(ctx, clean)
        _refuse_second_note(line, version_id)
        last = _last_text(ctx, line)
        version = _chosen(ctx, line, version_id, last)
        text = ctx.history.text(clean, version)
        if confirm:
            recover_pending(ctx)

        def restore_once() -> str | None:
            archived[0] = None  # an attempt a person's save undid archived nothing
            current = _current(ctx, clean)
            if confirm:
                require_base(clean, current, base, _look_again(clean))
            if confirm and current != text:  # a person's save meanwhile: kept, then restored
                archived[0] = _write(ctx, clean, current, text, version)
            return current

        current = planned_again_if_edited(restore_once)
        diff = unified_diff(clean, current, version, text)
        write = confirm and current != text
        warnings = _not_last(clean, last, version)
        if write:
            warnings += reindex_entity(ctx, clean, text)
    stale = base_is_stale(current, base)
    result = RestoreResult(clean, version.version_id, version.saved_at, diff, write,
                           archived[0], None if current is None else note_version(current),
                           stale)
    which = f"version {version.version_id} ({version.saved_at})"
    # only a preview gets here with a stale base (a restore raised): say so
    warn = (f"; but {changed_since(clean, current, base)}, so with {spell('base', base)} "
            f"it would be refused. {_look_again(clean)}" if stale and base is not None else "")
    if current == text:
        return Envelope(True, Action.UNCHANGED, f"{clean} already has the text of {which}; "
                        f"nothing to restore{warn}", result)
    if not confirm:
        return Envelope(True, Action.PREVIEW, f"preview only: run again with "
                        f"{spell('confirm')} to restore {clean} to {which}{warn}", result,
                        warnings)
    undo = (" (the text it replaced is kept as a version: `echo-memory history` lists it)"
            if current is not None else "")
    if archived[0] is not None:
        undo += f"; it is archived as {archived[0]}, as evolve archives"
    return Envelope(True, Action.RESTORED, f"restored {clean} to {which}{undo}", result,
                    warnings)


def _not_last(path: str, last: LastText | None, version: Version) -> tuple[str, ...]:
    """The warning of a restore of a note deleted by hand to a version not its ``last``."""
    if last is None or version.version_id == last.version_id:
        return ()
    why = (f"its last text is version {last.version_id}, not this one: restore that one to "
           "bring the note back as it was" if last.kept else
           f"{last.lost()}: version {version.version_id} is not the note as it was")
    return (f"{last.gone(path)}; {why}",)


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
