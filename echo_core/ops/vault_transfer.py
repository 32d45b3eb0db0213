"""``export --to DIR`` and ``import --from DIR``: the vault to and from a plain folder,
byte for byte (issue 20, part 5; SPEC §1.5).

``export_vault`` copies every file the vault lists (notes, attachments, the memory's own
files under ``_agent/``; not hidden files such as lock files or ``.obsidian/``) into a
folder, as the exact bytes stored: the folder is then an ordinary folder vault that a
person can open. Into a new or empty folder it writes a hidden staging folder beside it
and renames it into place at the end, so an export cut short leaves no half vault. A
folder that holds anything is refused unless ``force``: then the vault's files are added
to it, a file with the same path and other bytes is replaced (and listed), an identical
one is left alone, and nothing else in the folder is touched. It ends with one ``sync``.

``import_vault`` copies every file of a folder (walked as a folder vault lists itself:
``vault_transfer_io``) into the current vault, whatever its backend; the vault's
container is created first (a new PostgreSQL schema, a new folder), so a new vault needs
no ``init`` when the folder is one. A file the vault already holds with the same bytes is
left alone; one with other bytes is a conflict: the import is refused before anything is
written, naming them, unless ``force`` (then replaced, each prior text kept in the note
history, and the old bytes of a file that is not text copied under the state dir's
``SET_ASIDE`` folder, which the result names). Into a vault that has its marker, the vault's own files (the marker,
``_agent/index/``) are never replaced: a differing one is kept and reported (``kept_own``). Files are written a batch at a time (one transaction per batch on PostgreSQL),
under the vault lock; then the recall and entity indexes take in the notes written.

Both report counts, the bytes copied, what was replaced and what was skipped, and report
progress per batch. Errors: 2 for a bad folder (not a folder, not empty without
``force``, overlapping the vault's own folder) or conflicts without ``force``;
``BackendUnavailable`` when the vault cannot be reached (an import then has written
whole batches only: running it again finishes it).
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from echo_core import progress
from echo_core.actions import Action
from echo_core.errors import usage_error
from echo_core.models import Envelope
from echo_core.ops.vault_transfer_io import (
    TransferSkip,
    check_apart,
    chunks,
    folder_entries,
    folder_files,
    read_folder,
    read_vault,
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


@attrs.frozen
class TransferResult:
    """What a transfer did: ``source`` and ``target`` (a folder, or the vault's
    identity), ``files`` written and their ``bytes``, ``unchanged`` (already there with
    the same bytes), ``replaced`` (already there with other bytes; only with force),
    ``skipped`` (not copied, and why) and, for an import, the notes ``indexed`` and
    ``kept_own``: the vault's own files (its marker, ``_agent/index/``) that differed in
    the folder and were kept as the vault has them, and ``set_aside``: the folder the old
    bytes of replaced files that are not text went to (no note history holds them)."""

    source: str
    target: str
    files: int
    bytes: int
    unchanged: int
    replaced: tuple[str, ...]
    skipped: tuple[TransferSkip, ...]
    indexed: int = 0
    kept_own: tuple[str, ...] = ()
    set_aside: str = ""
    #: an import left the vault without its marker (a plain folder into a new vault)
    not_a_vault: bool = False


def _folder(raw: str, what: str) -> Path:
    if not raw.strip():
        raise usage_error(f"{what} is empty; give a folder path")
    return Path(raw).expanduser().resolve()


def _message(verb: str, result: TransferResult) -> str:
    head = (f"{verb} {result.files} files ({result.bytes} bytes) from {result.source} "
            f"to {result.target}")
    parts = [head]
    if result.unchanged:
        parts.append(f"{result.unchanged} already there unchanged")
    if result.replaced:
        parts.append(f"replaced {len(result.replaced)} that differed")
    if result.skipped:
        parts.append(f"skipped {len(result.skipped)} (see the list)")
    if result.indexed:
        parts.append(f"{result.indexed} notes indexed")
    if result.kept_own:
        parts.append(f"kept the vault's own {', '.join(result.kept_own)} (only init and "
                     "sweep write those)")
    if result.set_aside:
        parts.append(f"the replaced files that are not text were copied to {result.set_aside}")
    if result.not_a_vault:
        parts.append("the vault has no marker yet (the folder was not an echo-memory vault): "
                     "run `echo-memory init` on it to use it (init keeps every file)")
    return "; ".join(parts)


# --- export -------------------------------------------------------------------------------


def export_vault(ctx: EchoContext, to: str, *, force: bool = False) -> Envelope[TransferResult]:
    """Copy the vault into the folder ``to`` (module docstring)."""
    target = _folder(to, "--to")
    storage = ctx.vault.storage
    check_apart(target, storage, "--to")
    if target.exists() and not target.is_dir():
        raise usage_error(f"--to {target} is a file, not a folder; give a folder path")
    filled = folder_entries(target)
    if filled and not force:
        raise usage_error(
            f"folder {target} is not empty ({filled} entries); export into a new or empty "
            "folder, or pass --force to add the vault's files to it (a file with the same "
            "path and other content is replaced and listed; nothing else is touched)")
    paths = storage.list("")
    staging = None if filled else target.parent / f".{target.name}.echo-export-{secrets.token_hex(4)}"
    root = staging or target
    skipped: list[TransferSkip] = []
    replaced: list[str] = []
    files = size = unchanged = 0
    try:
        root.mkdir(parents=True, exist_ok=True)
        for batch in chunks(paths):
            for path, data in read_vault(storage, batch, skipped).items():
                outcome = _export_one(root, path, data, check=staging is None)
                if outcome == "unchanged":
                    unchanged += 1
                    continue
                if outcome == "replaced":
                    replaced.append(path)
                elif outcome != "written":
                    skipped.append(TransferSkip(path, outcome))
                    continue
                files += 1
                size += len(data)
            progress.report(min(len(paths), files + unchanged + len(skipped)), len(paths))
        if staging is not None:
            if target.exists():
                target.rmdir()  # empty (checked above)
            os.replace(staging, target)
            staging = None
        os.sync()
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    result = TransferResult(storage.identity, str(target), files, size, unchanged,
                            tuple(replaced), tuple(skipped))
    return Envelope(not skipped, Action.EXPORTED, _message("exported", result), result)


def _export_one(root: Path, path: str, data: bytes, *, check: bool) -> str:
    """Write one file: ``written``, ``replaced``, ``unchanged``, or why it was not."""
    full = root / path
    existed = False
    if check:
        if full.is_dir():
            return "a folder is in the way in the target folder"
        if full.is_file():
            try:
                if full.read_bytes() == data:
                    return "unchanged"
            except OSError:
                pass
            existed = True
    try:
        write_file(root, path, data)
    except OSError as exc:
        return f"cannot be written ({exc.strerror or exc})"
    return "replaced" if existed else "written"


# --- import -------------------------------------------------------------------------------

#: Where ``import --force`` copies the old bytes of the replaced files that are not text
#: (one folder per import, named by its time), under the vault's state dir.
SET_ASIDE = "import-replaced"


def import_vault(ctx: EchoContext, source: str, *,
                 force: bool = False) -> Envelope[TransferResult]:
    """Copy the folder ``source`` into the current vault (module docstring)."""
    root = _folder(source, "--from")
    storage = ctx.vault.storage
    check_apart(root, storage, "--from")
    if not root.is_dir():
        raise usage_error(f"--from {root} is not a folder; give the folder to import")
    skipped: list[TransferSkip] = []
    paths = folder_files(root, skipped)
    storage.create()
    with storage.lock():
        unchanged, differing = _compare(storage, root, paths, skipped)
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
        aside = ctx.state_dir / SET_ASIDE / ctx.now().strftime("%Y-%m-%d-%H%M%S")
        set_aside = False
        for path, old in sorted(differing.items()):
            try:
                ctx.keep_prior_text(path, old.decode("utf-8"))
            except UnicodeDecodeError:  # an attachment: no text history, so a copy
                write_file(aside, path, old)
                set_aside = True
        todo = [p for p in paths if p not in unchanged and p not in kept_own]
        written, size, texts = _import_batches(storage, root, todo, skipped, len(paths))
    indexed = _index(ctx, texts)
    result = TransferResult(str(root), storage.identity, len(written), size, len(unchanged),
                            tuple(sorted(p for p in differing if p in written)),
                            tuple(skipped), indexed, tuple(kept_own),
                            str(aside) if set_aside else "",
                            not_a_vault=not storage.exists(MARKER_PATH))
    return Envelope(not skipped, Action.IMPORTED, _message("imported", result), result)


def _own_files(storage: Storage, differing: Mapping[str, bytes]) -> list[str]:
    """The paths of ``differing`` that are the vault's own internal files (its marker,
    ``_agent/index/``), when the vault is one already (it has its marker): never replaced
    by an import, ``--force`` or not. Into a new vault the folder's come as they are."""
    own = sorted(p for p in differing if p.casefold() in INTERNAL_FILES
                 or p.casefold().startswith(INTERNAL_FOLDERS))
    return own if own and storage.exists(MARKER_PATH) else []


def _compare(storage: Storage, root: Path, paths: list[str],
             skipped: list[TransferSkip]) -> tuple[set[str], dict[str, bytes]]:
    """The folder's files the vault holds already: identical ones, and those that
    differ (path -> the vault's bytes)."""
    held = set(storage.list(""))
    both = [p for p in paths if p in held]
    unchanged: set[str] = set()
    differing: dict[str, bytes] = {}
    for batch in chunks(both):
        ours = read_vault(storage, batch, [])
        theirs = read_folder(root, batch, skipped)
        for path, data in theirs.items():
            if path not in ours:
                continue
            if ours[path] == data:
                unchanged.add(path)
            else:
                differing[path] = ours[path]
    return unchanged, differing


def _import_batches(storage: Storage, root: Path, todo: list[str], skipped: list[TransferSkip],
                    total: int) -> tuple[list[str], int, dict[str, str | None]]:
    """Write ``todo`` a batch at a time: the paths written, their bytes, their texts."""
    written: list[str] = []
    texts: dict[str, str | None] = {}
    size = 0
    done = total - len(todo)
    for batch in chunks(todo):
        files = read_folder(root, batch, skipped)
        landed = write_vault(storage, files, skipped)
        written.extend(landed)
        for path in landed:
            size += len(files[path])
            if path.endswith(".md"):
                try:
                    texts[path] = files[path].decode("utf-8")
                except UnicodeDecodeError:
                    pass
        done += len(batch)
        progress.report(done, total)
    return written, size, texts


def _index(ctx: EchoContext, texts: dict[str, str | None]) -> int:
    """Bring the imported notes into the recall and entity indexes."""
    if not texts:
        return 0
    from echo_core.ops.index_sync import sync_paths

    done = sync_paths(ctx, list(texts), texts=texts)
    return len(done.reindexed)
