"""``export --to DIR`` and ``import --from DIR``: the vault to and from a plain folder,
byte for byte (issue 20, part 5; SPEC §1.5).

``export_vault`` copies every file the vault lists (notes, attachments, the memory's own
files under ``_agent/``; not hidden files such as lock files or ``.obsidian/``, and not
a symbolic link in a folder vault, which is skipped and listed as ``import`` does) into
a folder, as the exact bytes stored and with each file's modification time (a folder
vault's, or the time PostgreSQL recorded): the folder is then an ordinary folder vault
that a person can open. Files are read in batches bounded in count and bytes, the vault
marker last. Into a new or empty folder it writes a hidden staging folder beside it
(``transfer_staging``; stale ones of killed exports are swept first) and renames it into
place at the end; a file that cannot be written (a full disk, a file size limit) stops
the export and removes the staging folder, so the folder never appears half done. A
folder that holds anything is refused unless ``force``: then the vault's files are
added to it, a file with the same path and other bytes is replaced (and listed), an
identical one is left alone, nothing else in the folder is touched, and a failed write
stops it saying how many files were written (the marker, last, is then not there) and
that the same export with ``--force`` finishes it. A path the folder cannot hold beside
another (a PostgreSQL vault's ``a.md`` and ``a.md/b.md``; a file or folder in the way
in the target) is skipped and listed. It ends with one ``sync``.

``import_vault`` (``transfer_import``) copies every file of a folder into the current
vault, whatever its backend.

Both report counts, the bytes copied, what was replaced and what was skipped, and report
progress per batch. Errors: 2 for a bad folder (not a folder, not empty without
``force``, overlapping the vault's own folder), conflicts without ``force`` or path
clashes (import); 1 or 69 for a write that failed (``transfer_result.stopped`` for a
forced export and an import); ``BackendUnavailable`` when the vault cannot be reached.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from echo_core import progress
from echo_core.actions import Action
from echo_core.errors import EchoError, usage_error
from echo_core.models import Envelope
from echo_core.ops.transfer_import import SET_ASIDE, import_vault
from echo_core.ops.transfer_plan import batches, clashes, marker_last
from echo_core.ops.transfer_result import (
    TransferResult,
    folder_arg,
    stopped,
    transfer_message,
)
from echo_core.ops.transfer_staging import staging_folder, sweep_staging
from echo_core.ops.transfer_times import vault_files
from echo_core.ops.vault_transfer_io import (
    SourceFile,
    TransferSkip,
    check_apart,
    folder_entries,
    folder_links,
    read_vault,
    vault_folder,
    write_failure,
    write_file,
)
from echo_core.protocols import Storage

if TYPE_CHECKING:
    from echo_core.context import EchoContext

__all__ = ["SET_ASIDE", "TransferResult", "export_vault", "import_vault"]


class _WriteFailed(Exception):
    """A file of the export could not be written (``path``, the ``OSError``)."""

    def __init__(self, path: str, error: OSError) -> None:
        super().__init__(path)
        self.path = path
        self.error = error


def export_vault(ctx: EchoContext, to: str, *, force: bool = False) -> Envelope[TransferResult]:
    """Copy the vault into the folder ``to`` (module docstring)."""
    target = folder_arg(to, "--to")
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
    sweep_staging(target.parent)
    skipped: list[TransferSkip] = []
    plan = _plan(storage, skipped)
    staging = None if filled else staging_folder(target)
    root = staging or target
    replaced: list[str] = []
    files = size = unchanged = 0
    try:
        root.mkdir(parents=True, exist_ok=True)
        for batch in batches(plan):
            got = read_vault(storage, [f.path for f in batch], skipped)
            for file in batch:
                data = got.get(file.path)
                if data is None:
                    continue
                outcome = _export_one(root, file, data, check=staging is None)
                if outcome == "unchanged":
                    unchanged += 1
                    continue
                if outcome == "replaced":
                    replaced.append(file.path)
                elif outcome != "written":
                    skipped.append(TransferSkip(file.path, outcome))
                    continue
                files += 1
                size += len(data)
            del got  # one batch in memory at a time
            progress.report(min(len(plan), files + unchanged + len(skipped)), len(plan))
        if staging is not None:
            if target.exists():
                target.rmdir()  # empty (checked above)
            os.replace(staging, target)
            staging = None
        os.sync()
    except _WriteFailed as failed:
        raise _stopped(failed, target, files, len(plan), staged=staging is not None) from None
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    result = TransferResult(storage.identity, str(target), files, size, unchanged,
                            tuple(replaced), tuple(skipped))
    return Envelope(not skipped, Action.EXPORTED, transfer_message("exported", result), result)


def _plan(storage: Storage, skipped: list[TransferSkip]) -> list[SourceFile]:
    """The vault's files to export, with their sizes and times, the marker last; a
    symbolic link in a folder vault and a path below another file (a PostgreSQL vault
    may hold ``a.md`` and ``a.md/b.md``; no folder can) go to ``skipped``."""
    paths = storage.list("")
    folder = vault_folder(storage)
    links = folder_links(folder) if folder is not None else {}
    left_out = {**clashes(paths, ()), **links}
    skipped.extend(TransferSkip(p, why) for p, why in sorted(left_out.items()))
    kept = [p for p in paths if p not in left_out and not any(
        p.startswith(link + "/") for link in links)]
    return marker_last(vault_files(storage, kept))


def _stopped(failed: _WriteFailed, target: Path, files: int, total: int, *,
             staged: bool) -> EchoError:
    """The error of an export stopped by a failed write: nothing left into a new folder,
    else how far it got."""
    cause = write_failure(failed.path, failed.error)
    if not staged:
        return stopped(cause, files, total, "export",
                       f"the same export again with --force into {target}")
    return EchoError(f"export stopped: {cause.message}; nothing was exported ({target} was "
                     "not created). Fix that (free space, a file size limit, permissions), "
                     "then run the export again", cause.code)


def _in_the_way(root: Path, path: str) -> str:
    """Why ``path`` cannot be written into the folder ``root`` that holds files of its
    own ("" when it can): a folder at its place, or a file where a folder of it goes."""
    if (root / path).is_dir():
        return "a folder is in the way in the target folder"
    parts = path.split("/")
    for n in range(1, len(parts)):
        above = root.joinpath(*parts[:n])
        if above.exists() and not above.is_dir():
            return f"a file ({'/'.join(parts[:n])}) is in the way in the target folder"
    return ""


def _export_one(root: Path, file: SourceFile, data: bytes, *, check: bool) -> str:
    """Write one file with its time: ``written``, ``replaced``, ``unchanged``, or why it
    was not (something in the way in a folder of the person's). ``_WriteFailed`` when
    the write itself fails."""
    full = root / file.path
    existed = False
    if check:
        blocked = _in_the_way(root, file.path)
        if blocked:
            return blocked
        if full.is_file():
            try:
                if full.read_bytes() == data:
                    return "unchanged"
            except OSError:
                pass
            existed = True
    try:
        write_file(root, file.path, data, file.mtime_ns)
    except OSError as exc:
        raise _WriteFailed(file.path, exc) from exc
    return "replaced" if existed else "written"
