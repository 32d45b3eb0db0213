"""``import --from DIR``: every file of a folder into the current vault, whatever its
backend (``vault_transfer`` describes both directions).

In order, under the vault lock: the folder is walked (``vault_transfer_io.folder_files``;
notes over the cap skipped, ``transfer_plan``); a path that clashes with the vault's (a
file where the other has a folder) refuses the import, naming them, before anything is
written; so do files that differ from the vault's at the same path, unless ``force``.
Then the import is recorded as under way (``transfer_progress``), the files are written
a batch at a time (bounded in count and bytes; one transaction per batch on PostgreSQL)
with the marker last, so a vault imported part-way is not a vault yet, and each keeps
its modification time where the target can hold it (``transfer_times``). The notes are
indexed (every note of the folder when the import resumes one cut short) and only then
is the record removed. A write that fails part-way stops the import with the number of
files written and "run the same import again" (``transfer_result.stopped``).

A folder holding ``.echo-history/`` (an unzipped backup) brings its note history: once
the files are written, its versions are merged into the vault's history
(``transfer_history``; none of a path the import left out), so ``history`` and
``restore`` work in the restored vault; importing it again adds nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from echo_core import progress
from echo_core.actions import Action
from echo_core.errors import EchoError, ExitCode, usage_error
from echo_core.history_files import HISTORY_PREFIX
from echo_core.models import Envelope
from echo_core.ops import transfer_progress
from echo_core.ops.transfer_history import HistoryImport, import_history
from echo_core.ops.transfer_plan import batches, clashes, folder_clashes, marker_last, within_cap
from echo_core.ops.transfer_result import (
    TransferResult,
    folder_arg,
    stopped,
    transfer_message,
)
from echo_core.ops.transfer_times import set_times
from echo_core.ops.vault_transfer_io import (
    SourceFile,
    TransferSkip,
    check_apart,
    folder_files,
    is_note,
    read_folder,
    read_vault,
    vault_folder,
    write_file,
    write_vault,
)
from echo_core.protocols import Storage
from echo_core.vault import MARKER_PATH
from echo_core.write_scope import INTERNAL_FILES, INTERNAL_FOLDERS

if TYPE_CHECKING:
    from echo_core.context import EchoContext

#: Conflicting paths an error message names (the result of a forced run lists them all).
_NAMED = 5
#: Where ``import --force`` copies the old bytes of the replaced files that are not text
#: (one folder per import, named by its time), under the vault's state dir.
SET_ASIDE = "import-replaced"


def import_vault(ctx: EchoContext, source: str, *,
                 force: bool = False) -> Envelope[TransferResult]:
    """Copy the folder ``source`` into the current vault (module docstring)."""
    root = folder_arg(source, "--from")
    storage = ctx.vault.storage
    check_apart(root, storage, "--from")
    if not root.is_dir():
        raise usage_error(f"--from {root} is not a folder; give the folder to import")
    skipped: list[TransferSkip] = []
    hidden: list[str] = []
    files = within_cap(folder_files(root, skipped, hidden), skipped)
    storage.create()
    with storage.lock():
        held = storage.list("")
        _refuse_clashes(storage, root, [f.path for f in files], held)
        unchanged, differing = _compare(storage, root, files, set(held), skipped)
        kept_own = _own_files(storage, differing)
        for path in kept_own:
            del differing[path]
        if differing and not force:
            named = ", ".join(sorted(differing)[:_NAMED])
            more = f" and {len(differing) - _NAMED} more" if len(differing) > _NAMED else ""
            raise usage_error(
                f"{len(differing)} files of {root} differ from the vault's files at the same "
                f"path ({named}{more}); nothing was imported. Pass --force to replace "
                "them with the folder's (each replaced text is kept in the note history, "
                f"any other file copied under {ctx.state_dir / SET_ASIDE}/)")
        unread = {s.path for s in skipped}
        todo = marker_last([f for f in files if f.path not in unchanged
                            and f.path not in kept_own and f.path not in unread])
        if todo:
            resumed = transfer_progress.begin(storage, str(root),
                                              ctx.now().isoformat(timespec="seconds"),
                                              force=force)
        else:
            resumed = any(e.source == str(root) for e in transfer_progress.unfinished(storage))
        aside = ctx.state_dir / SET_ASIDE / ctx.now().strftime("%Y-%m-%d-%H%M%S")
        set_aside = _keep_replaced(ctx, differing, aside)
        written, size, texts = _import_batches(storage, root, todo, skipped, len(files))
        if resumed:  # the run cut short may have written some of them without their time
            set_times(storage, {f.path: f.mtime_ns for f in files if f.path in unchanged})
        history = _import_history(ctx, root, skipped, kept_own)
    if history.found:  # reported as history (imported, or skipped), not as a hidden entry
        hidden = [h for h in hidden if h != f"{HISTORY_PREFIX}/"]
    notes = [f.path for f in files if is_note(f.path) and f.path not in kept_own
             and f.path not in unread]
    indexed = _index(ctx, texts, notes if resumed else None)
    if todo or resumed:
        with storage.lock():
            transfer_progress.finish(storage, str(root))
    result = TransferResult(str(root), storage.identity, len(written), size, len(unchanged),
                            tuple(sorted(p for p in differing if p in written)),
                            tuple(skipped), indexed, tuple(kept_own),
                            str(aside) if set_aside else "",
                            not_a_vault=not storage.exists(MARKER_PATH), hidden=tuple(hidden),
                            history_versions=history.versions,
                            history_already=history.already,
                            history_skipped=history.skipped)
    return Envelope(not skipped, Action.IMPORTED, transfer_message("imported", result), result)


def _import_history(ctx: EchoContext, root: Path, skipped: Sequence[TransferSkip],
                    kept_own: Sequence[str]) -> HistoryImport:
    """``transfer_history.import_history`` into the vault's history, leaving out the
    paths the import did (``skipped`` ones and those under them, ``kept_own``). Exit 78
    when the history cannot be written: the files are in, the same import again adds
    the versions."""
    left = ({s.path: f"skipped: {s.reason}" for s in skipped}
            | {p: "the vault's own file, kept as it is" for p in kept_own})

    def left_out(path: str) -> str:
        parts = path.split("/")
        return next((left[p] for p in ("/".join(parts[:n]) for n in range(len(parts), 0, -1))
                     if p in left), "")

    try:
        return import_history(ctx.history, root, left_out)
    except OSError as exc:
        raise EchoError(
            f"the files were imported but the note history of {root} could not be written "
            f"({exc.strerror or exc} in {ctx.history.files.where('')}); make it writable, "
            "then run the same import again (it adds only what is missing)",
            ExitCode.NOT_CONFIGURED) from None


def _refuse_clashes(storage: Storage, root: Path, paths: Sequence[str],
                    held: Sequence[str]) -> None:
    """Exit 2, before anything is written, when a path of the folder and one of the
    vault (``held``: its listing) cannot both be (a file where the other has a folder)."""
    found = clashes(paths, held)
    folder = vault_folder(storage)
    if folder is not None:
        found.update((p, why) for p, why in folder_clashes(folder, paths).items()
                     if p not in found)
    if not found:
        return
    named = "; ".join(f"{p} ({why})" for p, why in sorted(found.items())[:_NAMED])
    more = f"; and {len(found) - _NAMED} more" if len(found) > _NAMED else ""
    raise usage_error(
        f"{len(found)} files of {root} clash with the vault's: a file and a folder cannot "
        f"share a name: {named}{more}; nothing was imported. Rename one of each pair (in "
        "the folder or the vault), then run the import again")


def _own_files(storage: Storage, differing: Mapping[str, bytes]) -> list[str]:
    """The paths of ``differing`` that are the vault's own internal files (its marker,
    ``_agent/index/``), when the vault is one already (it has its marker): never replaced
    by an import, ``--force`` or not. Into a new vault the folder's come as they are."""
    own = sorted(p for p in differing if p.casefold() in INTERNAL_FILES
                 or p.casefold().startswith(INTERNAL_FOLDERS))
    return own if own and storage.exists(MARKER_PATH) else []


def _compare(storage: Storage, root: Path, files: Sequence[SourceFile], held: set[str],
             skipped: list[TransferSkip]) -> tuple[set[str], dict[str, bytes]]:
    """The folder's files the vault holds already (``held``: its listing): identical
    ones, and those that differ (path -> the vault's bytes)."""
    unchanged: set[str] = set()
    differing: dict[str, bytes] = {}
    for batch in batches([f for f in files if f.path in held]):
        paths = [f.path for f in batch]
        ours = read_vault(storage, paths, [])
        theirs = read_folder(root, paths, skipped)
        for path, data in theirs.items():
            if path not in ours:
                continue
            if ours[path] == data:
                unchanged.add(path)
            else:
                differing[path] = ours[path]
        del ours, theirs  # one batch in memory at a time
    return unchanged, differing


def _keep_replaced(ctx: EchoContext, differing: Mapping[str, bytes], aside: Path) -> bool:
    """Keep what a forced import replaces: each text in the note history (which holds a
    text once, however often kept: a rerun of a forced import cut short adds nothing),
    the bytes of any other file under ``aside``; True when something went there."""
    set_aside = False
    for path, old in sorted(differing.items()):
        try:
            ctx.keep_prior_text(path, old.decode("utf-8"))
        except UnicodeDecodeError:  # an attachment: no text history, so a copy
            write_file(aside, path, old)
            set_aside = True
    return set_aside


def _import_batches(storage: Storage, root: Path, todo: Sequence[SourceFile],
                    skipped: list[TransferSkip],
                    total: int) -> tuple[list[str], int, dict[str, str | None]]:
    """Write ``todo`` a batch at a time, each file given its time: the paths written,
    their bytes, their texts. A failed write raises ``stopped`` (how many were written)."""
    written: list[str] = []
    texts: dict[str, str | None] = {}
    size = 0
    done = total - len(todo)
    times = {f.path: f.mtime_ns for f in todo}
    try:
        for batch in batches(todo):
            files = read_folder(root, [f.path for f in batch], skipped)
            landed: list[str] = []
            try:  # each file gets its time as it lands (a kill leaves at most one without)
                write_vault(storage, files, skipped, landed,
                            lambda path: set_times(storage, {path: times[path]}))
            finally:
                written.extend(landed)
            for path in landed:
                size += len(files[path])
                if is_note(path):
                    try:
                        texts[path] = files[path].decode("utf-8")
                    except UnicodeDecodeError:
                        pass
            del files  # one batch in memory at a time
            done += len(batch)
            progress.report(done, total)
    except (EchoError, OSError) as exc:
        raise stopped(exc, len(written), len(todo), "import",
                      "the same import again") from exc
    return written, size, texts


def _index(ctx: EchoContext, texts: dict[str, str | None],
           every: Sequence[str] | None = None) -> int:
    """Bring the imported notes into the recall and entity indexes: those written
    (``texts``), or ``every`` note of the folder (read from the vault) for an import that
    resumes one cut short."""
    from echo_core.ops.index_sync import sync_paths

    if every is not None:
        return len(sync_paths(ctx, every).reindexed) if every else 0
    if not texts:
        return 0
    done = sync_paths(ctx, list(texts), texts=texts)
    return len(done.reindexed)
