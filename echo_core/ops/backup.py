"""``backup`` (SPEC §5.6): a dated zip of the whole vault, then rotation.

Every file is read through the storage (``list``, then ``read_bytes`` of each), so any
backend can be backed up and every file goes in byte-identical: notes with their line
endings, and attachments (images, PDFs, anything not UTF-8) as the bytes they are.
Each entry carries its file's modification time (``Storage.stat``; the backup's own time
when the storage cannot say), which ``unzip`` restores (``backup_entries``). Restoring is
unzipping into an empty folder; ``backup --verify`` (``backup_verify``) then checks it
against the manifest, the zip's last entry, listing every file's size and SHA-256.
Hidden files and folders (a path part starting with ``.``: ``.obsidian/``, ``.git/``,
``.trash/``) are left out, and so are this vault's own earlier backups when the backup
folder is inside the vault (a zip there of this vault's name and id, the very file in
the backup folder: ``own_backups``), each listed in ``skipped`` (``OWN_BACKUP``; the backup
is still whole). Any other zip, named like a backup or not, is backed up like any file.
A storage without ``read_bytes`` (a third-party backend that only reads text) has its
text files backed up and any other file skipped and reported; so is a file deleted or
unreadable while the backup runs, and one whose name is not valid UTF-8 (a zip cannot
hold it).

With ``history`` (the default) the vault's note history (the versions ``history`` lists:
per machine, in the state dir, unless the backend shares it) goes in too, under
``.echo-history/`` (``backup_history``): hidden, so it is never a note nor a vault file;
``import --from`` the unzipped backup merges it into the restored vault's note history
(``transfer_history``), which brings the versions back. It is small (at most 20 texts per note, each stored once) and it is how
a note's earlier versions survive a move to another machine. Without it the result
says the history is not in the backup.

The zip is ``echo-memory-<vault name>-YYYY-MM-DD-HHMMSS.zip`` (``ctx.now()``; ``-2``,
``-3``... when backups of that name and second exist: one past the highest suffix, so a
new backup always sorts after the earlier ones) in ``<state dir>/vaults/<vault id>/backups``
(``ctx.state_dir / "backups"``) or ``out``. The zip is written to a temp file, fsynced,
then given its name with a hard link that fails when the name exists (two backups running
at once never share one; nothing but a whole zip has a backup's name). Its zip comment names the vault id (the one keying the
state dir), as vaults in different folders may share a name. Then only the newest
``keep`` backups of this vault in that folder are kept, the one just written always
among them: rotation deletes only zips carrying this vault's id, never another vault's
and never a backup written before the id was recorded (delete those by hand); no other
file there is touched. The vault lock is not held: each file is whole (writes are
atomic) but a write landing during the backup may be in it or not.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import attrs

from echo_core.actions import Action
from echo_core.config import state_dir_for
from echo_core.errors import EchoError, ExitCode, usage_error
from echo_core.models import Envelope
from echo_core.ops.backup_entries import ManifestWriter, usable_mtime
from echo_core.ops.backup_history import HISTORY_FOLDER, history_entries
from echo_core.protocols import BackendUnavailable, Storage
from echo_core.tempfiles import fsync_dir, sweep_stale, temp_name
from echo_core.write_scope import text_problem

if TYPE_CHECKING:
    from echo_core.context import EchoContext

DEFAULT_KEEP = 30
BACKUPS_FOLDER = "backups"
_CHUNK = 64
_READERS = 8
DELETED = "deleted while the backup ran"
NOT_UTF8_NAME = "its name is not valid UTF-8, which a zip cannot hold; rename it to back it up"
OWN_BACKUP = ("an earlier backup of this vault, in the backup folder (left out: backups "
              "never hold each other)")
NO_HISTORY = ("note history (the versions `history` lists) is per machine and not in the "
              "backup")
_MARK = "echo-memory backup of vault {}"
_STAMP = "%Y-%m-%d-%H%M%S"


@attrs.frozen
class SkippedFile:
    """A vault file left out of the backup, and why."""

    path: str
    reason: str


@attrs.frozen
class BackupResult:
    """The backup written: its ``path``, the vault ``files`` and their ``bytes``
    (uncompressed) in it, the zip's own size, what was skipped, the older backups
    rotation removed, and how many note-history files went in under ``.echo-history/``
    (``history``: whether the history was asked for)."""

    path: str
    files: int
    bytes: int
    zip_bytes: int
    skipped: tuple[SkippedFile, ...]
    removed: tuple[str, ...]
    keep: int
    history: bool = True
    history_files: int = 0


def vault_name(vault: str) -> str:
    """A file-name-safe name for the vault: the last part of its path or URL (a URL's
    password never: ``postgresql://u:pw@host`` names ``u-host``)."""
    from echo_core.vault_seen import shown_vault

    _, sep, rest = shown_vault(vault).replace(":***@", "@").partition("://")
    tail = (rest if sep else vault).rstrip("/\\")
    tail = re.split(r"[/\\]", tail)[-1] if tail else ""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", tail).strip("-.")
    return name or "vault"


def backup_pattern(name: str) -> re.Pattern[str]:
    """Matches this vault's backup file names; groups: the timestamp and the suffix."""
    return re.compile(rf"echo-memory-{re.escape(name)}-(\d{{4}}-\d{{2}}-\d{{2}}-\d{{6}})"
                      r"(?:-(\d+))?\.zip")


def _hidden(path: str) -> bool:
    return any(part.startswith(".") for part in path.split("/"))


@runtime_checkable
class BytesReadable(Protocol):
    """A storage that reads a file's raw bytes (``FolderStorage``, ``ObsidianStorage``):
    ``read_bytes(path)`` -> the bytes as stored; errors as ``Storage.read``."""

    def read_bytes(self, path: str) -> bytes: ...


def _reader(storage: Storage) -> Callable[[str], bytes]:
    """How to read one file's bytes: ``read_bytes`` where the storage has it, else its
    UTF-8 text (a file that is not text then fails and is skipped)."""
    if isinstance(storage, BytesReadable):
        return storage.read_bytes
    return lambda path: storage.read(path).encode("utf-8")


def _mtime(storage: Storage, path: str) -> float | None:
    """The file's modification time, None when the storage cannot say."""
    try:
        return storage.stat(path).mtime
    except BackendUnavailable:
        raise
    except (EchoError, OSError, ValueError, TypeError, AttributeError, NotImplementedError):
        return None


def _read_one(storage: Storage, read: Callable[[str], bytes],
              path: str) -> tuple[bytes, float | None] | SkippedFile:
    try:
        return read(path), _mtime(storage, path)
    except BackendUnavailable:
        raise
    except EchoError as exc:
        reason = DELETED if exc.code == ExitCode.NOT_FOUND else exc.message
        return SkippedFile(path, reason)


def _read_all(storage: Storage, paths: Sequence[str],
              skipped: list[SkippedFile]) -> Iterator[tuple[str, bytes, float | None]]:
    """``(path, bytes, mtime)`` of each readable file, in order, ``_CHUNK`` at a time (read
    on ``_READERS`` threads: a remote backend answers several requests at once); the
    rest is appended to ``skipped``."""
    read = _reader(storage)
    with ThreadPoolExecutor(max_workers=_READERS) as pool:
        for start in range(0, len(paths), _CHUNK):
            chunk = paths[start:start + _CHUNK]
            for path, got in zip(chunk, pool.map(lambda p: _read_one(storage, read, p), chunk),
                                 strict=True):
                if isinstance(got, SkippedFile):
                    skipped.append(got)
                else:
                    yield path, *got


def _next_name(folder: Path, name: str, stamp: str, after: int = 0) -> tuple[int, Path]:
    """``(n, path)`` of the backup name for ``stamp`` one past the highest suffix of that
    name and second in ``folder`` (and past ``after``): never a gap an older backup left."""
    pattern = backup_pattern(name)
    taken = [int(m.group(2) or 1) for child in folder.iterdir()
             if (m := pattern.fullmatch(child.name)) and m.group(1) == stamp]
    n = max([*taken, after], default=0) + 1
    return n, folder / (f"echo-memory-{name}-{stamp}.zip" if n == 1
                        else f"echo-memory-{name}-{stamp}-{n}.zip")


def _publish(tmp: Path, folder: Path, name: str, stamp: str) -> Path:
    """Give the finished zip ``tmp`` its backup name (``_next_name``) and return it. The
    name is taken with a hard link, which fails when the name exists: two backups running
    at once never share one, and nothing but a whole zip ever has a backup's name. A
    filesystem without hard links gets a rename when the name is still free."""
    n = 0
    while True:
        n, target = _next_name(folder, name, stamp, n)
        try:
            os.link(tmp, target)
        except FileExistsError:
            continue
        except OSError:  # no hard links here (FAT, some network shares)
            if target.exists():
                continue
            os.replace(tmp, target)
            return target
        tmp.unlink()
        return target


def _is_backup_of(path: Path, vault_id: str) -> bool:
    """Whether the zip at ``path`` ends with the comment naming ``vault_id``."""
    mark = _MARK.format(vault_id).encode("ascii")
    try:
        with open(path, "rb") as handle:
            if handle.seek(0, os.SEEK_END) < len(mark):
                return False
            handle.seek(-len(mark), os.SEEK_END)
            return handle.read() == mark
    except OSError:
        return False


def rotate(folder: Path, name: str, keep: int, *, vault_id: str,
           written: Path) -> tuple[str, ...]:
    """Delete all but the newest ``keep`` backups of the vault ``name`` / ``vault_id`` in
    ``folder``, counting ``written`` (never deleted) as the newest; return the names
    removed (oldest first). Only zips whose comment names ``vault_id`` are candidates."""
    pattern = backup_pattern(name)
    found = []
    for child in folder.iterdir():
        match = pattern.fullmatch(child.name)
        if (match and child != written and child.is_file()
                and _is_backup_of(child, vault_id)):
            found.append(((match.group(1), int(match.group(2) or 1)), child))
    found.sort()
    doomed = [child for _, child in found[:max(0, len(found) - (keep - 1))]]
    for child in doomed:
        child.unlink(missing_ok=True)
    return tuple(child.name for child in doomed)


def _same_file(storage: Storage, path: str, local: Path) -> bool:
    """Whether the vault file ``path`` is the file ``local``: the same inode for a folder
    vault; else (a backend whose folder is not known here) the same size and mtime."""
    from echo_core.ops.vault_transfer_io import vault_folder

    root = vault_folder(storage)
    try:
        if root is not None:
            return os.path.samefile(root / path, local)
        mine, theirs = storage.stat(path), local.stat()
    except BackendUnavailable:
        raise
    except (EchoError, OSError, ValueError):
        return False
    return mine.size == theirs.st_size and abs(mine.mtime - theirs.st_mtime) < 2


def own_backups(storage: Storage, paths: Sequence[str], folder: Path, name: str,
                vault_id: str) -> set[str]:
    """The vault ``paths`` that are this vault's own backups: named as ``name``'s, in
    ``folder`` (the very file there, ``_same_file``), carrying ``vault_id`` in their
    comment. Another vault's backup, a copy of ours elsewhere in the vault, and a backup
    without the id are not (they are backed up like any file)."""
    pattern = backup_pattern(name)
    found = set()
    for path in paths:
        base = path.rsplit("/", 1)[-1]
        local = folder / base
        if (pattern.fullmatch(base) and _is_backup_of(local, vault_id)
                and _same_file(storage, path, local)):
            found.add(path)
    return found


def _history_note(history: bool, count: int) -> str:
    if not history:
        return NO_HISTORY
    if not count:
        return "no note history kept yet"
    return (f"note history: {count} file(s) under {HISTORY_FOLDER} (copy it into the "
            "restored vault's <state dir>/vaults/<vault id>/history to keep the versions)")


def backup_vault(ctx: EchoContext, *, keep: int = DEFAULT_KEEP, out: str | None = None,
                 history: bool = True) -> Envelope[BackupResult]:
    """Write a dated zip of the vault (with its note history unless ``history`` is False)
    and keep the newest ``keep`` (see module docstring).

    ``ok`` is False (exit 1) when a file that is there could not be read: the zip is
    written but incomplete; so is it when a file's name is not UTF-8 (``NOT_UTF8_NAME``: a
    zip cannot hold it; the rest is backed up). Errors: 2 when ``keep`` < 1 or ``out`` is
    not a usable folder; ``BackendUnavailable`` when the backend is down (no zip is left
    behind). Side effects: the zip; rotation of this vault's older backups."""
    if keep < 1:
        raise usage_error(f"--keep must be at least 1 (got {keep}); the default is {DEFAULT_KEEP}")
    folder = Path(out).expanduser() if out else ctx.state_dir / BACKUPS_FOLDER
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise usage_error(f"cannot use {str(folder)!r} for backups ({exc.strerror}); "
                          "give a writable folder with --out") from None
    name = vault_name(ctx.config.vault.value)
    storage = ctx.vault.storage
    vault_id = state_dir_for("", storage.identity).name  # the id keying state dirs
    now = ctx.now()
    skipped: list[SkippedFile] = []
    paths = []
    for path in storage.list(""):
        if _hidden(path):
            continue
        if text_problem(path) is None:
            paths.append(path)
        else:
            skipped.append(SkippedFile(path, NOT_UTF8_NAME))
    own = own_backups(storage, paths, folder, name, vault_id)
    skipped += [SkippedFile(path, OWN_BACKUP) for path in sorted(own)]
    paths = [path for path in paths if path not in own]
    sweep_stale(folder)  # leftovers of backups killed mid-write
    stamp = now.strftime(_STAMP)
    tmp = folder / temp_name(f"echo-memory-{name}-{stamp}.zip")
    files = size = kept = 0
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.comment = _MARK.format(vault_id).encode("ascii")
            entries = ManifestWriter(archive)
            for path, data, mtime in _read_all(storage, paths, skipped):
                entries.add(path, data, usable_mtime(mtime, now.timestamp()))
                files += 1
                size += len(data)
            if history:
                for path, data in history_entries(storage, ctx.state_dir):
                    entries.add(path, data, usable_mtime(None, now.timestamp()))
                    kept += 1
            entries.finish(vault_id=vault_id, written_at=now, history=history,
                           skipped=skipped)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        target = _publish(tmp, folder, name, stamp)
    finally:
        if tmp.exists():
            tmp.unlink()
    fsync_dir(folder)
    removed = rotate(folder, name, keep, vault_id=vault_id, written=target)
    result = BackupResult(str(target), files, size, target.stat().st_size, tuple(skipped),
                          removed, keep, history, kept)
    message = f"backed up {files} files ({size} bytes) to {target}"
    unread = [s for s in skipped if s.reason != OWN_BACKUP]
    if unread:
        message += (f"; skipped {len(unread)} it could not read: "
                    + ", ".join(s.path for s in unread))
    if own:
        message += f"; left out {len(own)} earlier backup(s) of this vault in the backup folder"
    message += "; " + _history_note(history, kept)
    lost = [s for s in unread if s.reason != DELETED]
    if removed:
        message += f"; removed {len(removed)} older backup(s), keeping the newest {keep}"
    if lost:
        message += "; this backup is incomplete: a restore from it would lack them"
    return Envelope(not lost, Action.BACKED_UP, message, result)
