"""Finding the notes that changed since the indexes last agreed with them, and syncing.

The engine the fast sweep and the freshness check share. Given what the backend says
now about some notes (``stamps``: path -> ``(size, mtime_ns)``, None for gone) and what
the manifest recorded, ``apply_stamps`` reads only the notes that are new, whose stamp
moved, or that the caller asks to verify by hash; a note whose text is the recorded one
(a touch, a sync tool rewriting the same bytes) only gets its stamp updated. The notes
that really changed go to ``index_sync.sync_paths``, and the manifest records each note
once both indexes took it (a note the entity index could not take now is left for the
next check).

``baseline`` records the whole vault when the manifest has nothing yet: both indexes
are rebuilt from one read of every note, so whatever happened before is covered.

A note renamed by hand (``mv a.md b.md``, Obsidian's rename) shows as one note gone and
one new in the same check. When the new note's text hashes to the gone note's recorded
hash, and no other gone or new note of that check has that hash, the rename is recorded
in the note history (``NoteHistory.record_rename``), so ``history`` of the new path lists
the old path's versions. Limits: a rename and an edit between two checks (the hash
differs), or two notes of one text renamed together, record nothing; this is looked at
only when a check finds both gone and new notes. Every other gone note (deleted by hand)
is recorded in the note history with the hash of its last text as recorded
(``NoteHistory.record_deleted``), so ``history`` and ``restore`` can say whether that
text is among the kept versions.

A file whose name no vault path can be (made by hand: not UTF-8, a ``:`` or ``\\``;
``paths.refused_paths``) is not tracked: no read takes it, and neither the manifest nor
the indexes could hold its name, so one such file never stops a check (lint names it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import attrs

from echo_core.corpus import EXCLUDED_FILES, EXCLUDED_PREFIXES, in_corpus, index_doc
from echo_core.entities import content_hash
from echo_core.errors import EchoError, ExitCode
from echo_core.lazy_log import lazy_logger
from echo_core.models import TreeScan
from echo_core.note_entities import folder_kind, kind_folders
from echo_core.notes import parse_note
from echo_core.ops.index_sync import IndexSync, read_current, sync_paths
from echo_core.paths import is_listed_path, refused_paths
from echo_core.progress import report as report_progress
from echo_core.progress import wanted as progress_wanted
from echo_core.protocols import VaultMissing
from echo_core.vault import MARKER_PATH
from echo_core.vault_manifest import RecordedNotes, Row, VaultManifest
from echo_core.vault_scan import file_digests, file_stamps, folder_stamps, scan_tree

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.protocols import IndexDoc, Storage

Stamp = tuple[int, int]
log = lazy_logger("echo_memory")
READ_BATCH = 256


def tracked(path: str) -> bool:
    """Whether the manifest follows the note at ``path``: every note the recall index
    covers (entity notes included) whose path a read takes (``refused_paths``)."""
    return in_corpus(path) and is_listed_path(path)


#: The folders no tracked note is in (a scan leaves them out).
UNTRACKED_FOLDERS = tuple(prefix.rstrip("/") for prefix in EXCLUDED_PREFIXES)


def untracked_folder(folder: str) -> bool:
    """Whether no tracked note can be in ``folder`` (``UNTRACKED_FOLDERS`` or below one):
    such a folder's stamp is not recorded, so the churn of echo-memory's own files there
    (the entity journal in ``_agent/index``) sends no check listing it."""
    return (folder + "/").startswith(EXCLUDED_PREFIXES)


def _drop_untracked_files(files: dict[str, Stamp]) -> None:
    """Leave out of a scan's ``files`` the READMEs, the marker and the paths no read
    takes (``refused_paths``), so none of them reaches the manifest."""
    for path in [p for p in files if p[-9:].lower() == "readme.md" or p in EXCLUDED_FILES]:
        if not in_corpus(path):
            del files[path]
    for path in refused_paths(files):
        del files[path]


def scan_corpus(storage: Storage) -> TreeScan:
    """One scan of the tracked notes: ``.md`` files outside the untracked folders, the
    folder READMEs and the marker left out (``tracked``)."""
    scan = scan_tree(storage, ".md", UNTRACKED_FOLDERS)
    _drop_untracked_files(scan.files)
    return scan


def corpus_of(scan: TreeScan) -> TreeScan:
    """What ``scan_corpus`` gives, taken from an earlier whole-vault scan of ``.md``
    files (``scan_tree(storage, ".md")``) instead of a new walk."""
    files = {p: s for p, s in scan.files.items() if not p.startswith(EXCLUDED_PREFIXES)}
    _drop_untracked_files(files)
    return TreeScan(files, {f: m for f, m in scan.folders.items() if not untracked_folder(f)})


def stamps_against(manifest: VaultManifest, files: Mapping[str, Stamp]
                   ) -> tuple[dict[str, Stamp | None], RecordedNotes]:
    """The notes of a scan (``files``) whose stamp is not the recorded one (None: a
    recorded note the scan did not find), plus those recorded without a hash, and the
    record. An unchanged vault costs one dict comparison."""
    recorded = manifest.snapshot()
    seen = recorded.stamps
    current: dict[str, Stamp | None] = {}
    if files != seen:
        current = {p: s for p, s in files.items() if seen.get(p) != s}
        current.update({p: None for p in seen if p not in files})
    current.update({p: files[p] for p in recorded.unhashed() if p in files})
    return current, recorded


@attrs.frozen
class Changes:
    """What one check found and did."""

    new: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()
    touched: int = 0
    verified: int = 0
    unreadable: tuple[str, ...] = ()
    sync: IndexSync = attrs.field(factory=IndexSync)

    @property
    def found(self) -> int:
        """Notes new, changed or gone."""
        return len(self.new) + len(self.changed) + len(self.gone)


def manifest_of(ctx: EchoContext) -> VaultManifest:
    """The context's manifest (one per context, opened on first use)."""
    manifest = ctx.__dict__.get("_vault_manifest")
    if manifest is None:
        manifest = VaultManifest(ctx.state_dir)
        ctx.__dict__["_vault_manifest"] = manifest
    assert isinstance(manifest, VaultManifest)
    return manifest


def _read(ctx: EchoContext, paths: list[str]) -> tuple[dict[str, str | None], list[str]]:
    texts: dict[str, str | None] = {}
    bad: list[str] = []
    for start in range(0, len(paths), READ_BATCH):
        got, failed = read_current(ctx, paths[start:start + READ_BATCH])
        texts.update(got)
        bad.extend(failed)
    return texts, bad


def apply_stamps(ctx: EchoContext, stamps: Mapping[str, Stamp | None],
                 recorded: Mapping[str, Row], verify: Iterable[str] = (),
                 folders: Mapping[str, int | None] | None = None,
                 facts: Mapping[str, str] | None = None, drop: Iterable[str] = (),
                 lock_timeout: float = 5.0) -> Changes:
    """Sync the notes ``stamps`` shows new, moved or gone against ``recorded`` (their
    manifest rows), plus ``verify`` (paths to re-hash even with an unchanged stamp) and
    ``drop`` (paths no note is at, to forget whatever the manifest says); record the
    outcome, ``folders`` stamps and ``facts`` in the manifest."""
    new, moved = [], []
    gone = [p for p in drop if p not in recorded]
    for path, stamp in stamps.items():
        row = recorded.get(path)
        if stamp is None:
            if row is not None:
                gone.append(path)
        elif row is None:
            new.append(path)
        elif (stamp[0], stamp[1]) != (row[0], row[1]) or not row[2]:
            moved.append(path)
    if gone or any(m is None for m in (folders or {}).values()):
        require_vault_present(ctx.vault.storage)
    checks = sorted({*new, *moved, *_differing(ctx, verify, recorded, gone, new, moved)})
    texts, bad = _read(ctx, checks)
    changed: list[str] = []
    rows: dict[str, Row | None] = {}
    touched = 0
    for path in checks:
        text = texts.get(path)
        if text is None:  # gone between the listing and the read
            if path in recorded:
                gone.append(path)
            continue
        digest = content_hash(text)
        stamp = stamps.get(path) or recorded[path][:2]
        row = recorded.get(path)
        if row is not None and row[2] == digest:
            if (stamp[0], stamp[1]) != (row[0], row[1]):
                rows[path] = (stamp[0], stamp[1], digest)
                touched += 1
            continue
        rows[path] = (stamp[0], stamp[1], digest)
        changed.append(path)
    pairs = renamed_pairs(gone, new, recorded, rows) if gone and new else []
    _record_renames(ctx, pairs, lock_timeout)
    _record_deleted(ctx, deleted_notes(gone, recorded, pairs), lock_timeout)
    to_sync = {p: texts.get(p) for p in changed}
    to_sync.update(dict.fromkeys(gone))
    sync = (sync_paths(ctx, to_sync, texts=to_sync, lock_timeout=lock_timeout)
            if to_sync else IndexSync())
    for path in gone:
        rows[path] = None
    if sync.entities_pending:  # the entity index did not take them: find them again
        rows = {p: r for p, r in rows.items() if p not in to_sync}
        folders = {}
    bad_set = set(bad)
    manifest_of(ctx).update({p: r for p, r in rows.items() if p not in bad_set},
                            folders or {}, **(facts or {}))
    new_set = set(new)
    return Changes(tuple(p for p in changed if p in new_set),
                   tuple(p for p in changed if p not in new_set), tuple(sorted(gone)),
                   touched, len(set(verify)), tuple(bad), sync)


def renamed_pairs(gone: Iterable[str], new: Iterable[str], recorded: Mapping[str, Row],
                  rows: Mapping[str, Row | None]) -> list[tuple[str, str]]:
    """The renames ``(old, new)`` one check shows: a ``gone`` note and a ``new`` one whose
    text hashes (``rows``: as read now) to the gone note's ``recorded`` hash, when no
    other gone or new note has that hash (else which went where is unknown: none)."""
    before: dict[str, list[str]] = {}
    for path in dict.fromkeys(gone):
        row = recorded.get(path)
        if row is not None and row[2]:
            before.setdefault(row[2], []).append(path)
    after: dict[str, list[str]] = {}
    for path in new:
        row = rows.get(path)
        if row is not None and row[2] in before:
            after.setdefault(row[2], []).append(path)
    return [(olds[0], after[digest][0]) for digest, olds in before.items()
            if len(olds) == 1 and len(after.get(digest, ())) == 1]


def _record_renames(ctx: EchoContext, pairs: list[tuple[str, str]],
                    lock_timeout: float) -> None:
    """Record ``pairs`` in the note history under the vault lock; a failure (the lock
    held, the history not writable) is logged: the check goes on."""
    if not pairs:
        return
    at = ctx.now().isoformat(timespec="seconds")
    try:
        with ctx.vault.storage.lock(timeout=lock_timeout):
            for old, new in pairs:
                ctx.history.record_rename(old, new, at=at)
    except (OSError, EchoError) as exc:
        log.warning("could not record the renames %s in the note history (%s): `history` "
                    "of the new paths will not list the old ones' versions", pairs, exc)


def deleted_notes(gone: Iterable[str], recorded: Mapping[str, Row],
                  renamed: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The notes ``gone`` that were deleted (not renamed), as ``(path, hash)``: the hash
    of each one's last text as recorded (a note recorded without one is left out)."""
    moved = {old for old, _new in renamed}
    return [(p, recorded[p][2]) for p in dict.fromkeys(gone)
            if p not in moved and p in recorded and recorded[p][2]]


def _record_deleted(ctx: EchoContext, notes: list[tuple[str, str]],
                    lock_timeout: float) -> None:
    """Record ``notes`` (``deleted_notes``) in the note history under the vault lock, so
    ``history`` and ``restore`` of a path can say whether its last text is kept; a
    failure is logged: the check goes on."""
    if not notes:
        return
    at = ctx.now().isoformat(timespec="seconds")
    try:
        with ctx.vault.storage.lock(timeout=lock_timeout):
            ctx.history.record_deleted(notes, at=at)
    except (OSError, EchoError) as exc:
        log.warning("could not record the deletion of %s in the note history (%s): "
                    "`history` of those paths cannot say whether their last text is kept",
                    [p for p, _h in notes], exc)


def require_vault_present(storage: Storage) -> None:
    """Raise ``VaultMissing`` unless the vault is still there: its folder, and in it the
    marker or any of echo-memory's own files under ``_agent/``. Checked before notes seen
    gone are dropped from the indexes: a vault folder unmounted or moved away (or a mount
    point left empty without its drive) shows every note gone, and dropping them would
    leave recall answering nothing once the vault is back, with no check noticing."""
    try:
        if storage.exists(MARKER_PATH) or storage.list("_agent"):
            return
    except EchoError as exc:
        if isinstance(exc, VaultMissing) or exc.code == ExitCode.UNAVAILABLE:
            raise
        raise VaultMissing(f"could not look for the vault marker ({exc})") from exc
    raise VaultMissing(f"the vault holds neither its marker {MARKER_PATH} nor anything "
                       "under _agent/ (a mount point without its drive?); notes seen "
                       "gone are kept in the indexes until it is back")


def _differing(ctx: EchoContext, verify: Iterable[str], recorded: Mapping[str, Row],
               gone: list[str], *skip: list[str]) -> list[str]:
    """The notes of ``verify`` (recorded, not gone, not already to read) to read: those
    whose bytes hash to another value than recorded when the backend hashes without
    reading texts out (``vault_scan.file_digests``), else all of them."""
    skipped = set(gone).union(*skip)
    wanted = [p for p in verify if p in recorded and p not in skipped]
    digests = file_digests(ctx.vault.storage, wanted)
    if digests is None:
        return wanted
    return [p for p in wanted if digests.get(p) != recorded[p][2]]


def entity_drift(ctx: EchoContext, files: Iterable[str]) -> tuple[set[str], set[str]]:
    """Notes in a kind folder the entity index has no entry for, and entries whose note
    is not among ``files``: what to sync however the manifest looks."""
    present = set(files)
    indexed = ctx.entity_names.all_paths()
    folders = kind_folders(ctx.manifest)
    missing = {p for p in present if p not in indexed and folder_kind(p, folders) is not None}
    return missing, indexed - present


def baseline(ctx: EchoContext, stamps: Mapping[str, Stamp], folders: Mapping[str, int],
             at: str) -> Changes:
    """Rebuild both indexes from one read of every note in ``stamps`` and record them all
    (the manifest had nothing: nothing it says can be trusted)."""
    from echo_core.ops.recall_index import rebuild_index

    paths = sorted(stamps)
    texts, bad = _read(ctx, paths)
    docs: list[IndexDoc] = []
    rows: dict[str, Row] = {}
    for path in paths:
        text = texts.get(path)
        if text is None:
            continue
        rows[path] = (*stamps[path], content_hash(text))
        try:
            doc = index_doc(parse_note(path, text))
        except Exception as exc:  # noqa: BLE001 - one bad note never stops a rebuild
            log.warning("recall index: skipped unparsable note %s (%s)", path, exc)
            continue
        if doc is not None:
            docs.append(doc)
    if progress_wanted():  # a first build on a terminal draws its bar, as reindex does
        total = len(docs)
        report_progress(0, total)
        rebuild_index(ctx, lambda done: report_progress(min(done, total), total), docs=docs)
        report_progress(total, total)
    else:
        rebuild_index(ctx, docs=docs)
    gone = sorted(ctx.entity_names.all_paths() - set(rows))
    kinds = kind_folders(ctx.manifest)
    entity_texts: dict[str, str | None] = {
        p: t for p, t in texts.items() if folder_kind(p, kinds) is not None}
    entity_texts.update(dict.fromkeys(gone))
    sync = sync_paths(ctx, entity_texts, texts=entity_texts, recall=False)
    if sync.entities_pending:
        return Changes(unreadable=tuple(bad), sync=sync)
    manifest_of(ctx).replace(rows, folders, baseline=at, fast_sweep=at)
    return Changes(new=tuple(sorted(rows)), gone=tuple(gone), unreadable=tuple(bad), sync=sync)


def sync_changed(ctx: EchoContext, paths: Iterable[str], *,
                 lock_timeout: float = 5.0) -> Changes:
    """Sync notes a watcher (or a change log, ``ops.change_feed``) says changed (created,
    modified or deleted) and record them: each is stat-ed and, when present, re-hashed,
    so an event for a note whose text did not change (a touch, an editor's save of the
    same text) costs no index write. ``lock_timeout``: the entity part's wait for the
    vault lock (``Changes.sync.entities_pending`` when it timed out)."""
    from echo_core.vault_scan import file_stamps

    wanted = sorted({p for p in paths if tracked(p)})
    if not wanted:
        return Changes()
    stamps = file_stamps(ctx.vault.storage, wanted)
    recorded = manifest_of(ctx).rows(wanted)
    return apply_stamps(ctx, stamps, recorded, verify=[p for p in wanted if stamps.get(p)],
                        drop=[p for p in wanted if stamps.get(p) is None],
                        lock_timeout=lock_timeout)


def record_baseline(ctx: EchoContext, digests: Mapping[str, str],
                    read: TreeScan | None = None, written: Iterable[str] = ()) -> None:
    """Record the whole vault as both indexes now stand (the full sweep just rebuilt
    them from the notes whose ``content_hash`` ``digests`` holds): every note's stamp and
    every folder's, its hash from ``digests`` (a note missing there is re-read by the
    next fast sweep).

    The stamps come from a fresh listing, or from ``read``, the scan the notes were read
    after (``scan_tree(storage, ".md")``), with the notes the caller then ``written`` and
    every folder stat'ed again: no second walk. A note edited by hand after that scan
    keeps its older stamp here, so the next check reads it again."""
    from echo_core.entities import JOURNAL_PATH, SNAPSHOT_PATH, file_signature

    storage = ctx.vault.storage
    if read is None:
        scan = scan_corpus(storage)
    else:
        scan = corpus_of(read)
        for path, stamp in file_stamps(storage, sorted(set(written))).items():
            if stamp is None:
                scan.files.pop(path, None)
            elif path in scan.files or tracked(path):
                scan.files[path] = stamp
        _drop_untracked_files(scan.files)
        if scan.folders:
            now = folder_stamps(storage, sorted(scan.folders))
            scan = TreeScan(scan.files, {f: m for f, m in now.items() if m is not None})
    rows: dict[str, Row] = {}
    for path, (size, mtime) in scan.files.items():
        rows[path] = (size, mtime, digests.get(path, ""))
    at = ctx.now().isoformat(timespec="seconds")
    seen = json.dumps([file_signature(storage, SNAPSHOT_PATH), file_signature(storage, JOURNAL_PATH)])
    manifest_of(ctx).replace(rows, scan.folders, baseline=at, full_sweep=at, fast_sweep=at,
                             entities_seen=seen)
