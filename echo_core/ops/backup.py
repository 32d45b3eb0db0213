"""``backup`` (SPEC §5.6): a dated zip of the whole vault, then rotation.

Every file is read through the storage (``list``, then ``read_bytes`` of each), so any
backend can be backed up and every file goes in byte-identical: notes with their line
endings, and attachments (images, PDFs, anything not UTF-8) as the bytes they are.
Restoring is unzipping into the vault folder. Hidden files and folders (a path part
starting with ``.``: ``.obsidian/``, ``.git/``, ``.trash/``) are left out, and so are
earlier backups of this vault lying inside it. A storage without ``read_bytes`` (a
third-party backend that only reads text) has its text files backed up and any other
file skipped and reported; so is a file deleted or unreadable while the backup runs,
and one whose name is not valid UTF-8 (a zip cannot hold it).

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

import datetime as _dt
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
_MARK = "echo-memory backup of vault {}"
_STAMP = "%Y-%m-%d-%H%M%S"


@attrs.frozen
class SkippedFile:
    """A vault file left out of the backup, and why."""

    path: str
    reason: str


@attrs.frozen
class BackupResult:
    """The backup written: its ``path``, the ``files`` and ``bytes`` (uncompressed) in
    it, the zip's own size, what was skipped, and the older backups rotation removed."""

    path: str
    files: int
    bytes: int
    zip_bytes: int
    skipped: tuple[SkippedFile, ...]
    removed: tuple[str, ...]
    keep: int


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


def _read_one(read: Callable[[str], bytes], path: str) -> bytes | SkippedFile:
    try:
        return read(path)
    except BackendUnavailable:
        raise
    except EchoError as exc:
        reason = DELETED if exc.code == ExitCode.NOT_FOUND else exc.message
        return SkippedFile(path, reason)


def _read_all(storage: Storage, paths: Sequence[str],
              skipped: list[SkippedFile]) -> Iterator[tuple[str, bytes]]:
    """``(path, bytes)`` of each readable file, in order, ``_CHUNK`` at a time (read on
    ``_READERS`` threads: a remote backend answers several requests at once); the rest
    is appended to ``skipped``."""
    read = _reader(storage)
    with ThreadPoolExecutor(max_workers=_READERS) as pool:
        for start in range(0, len(paths), _CHUNK):
            chunk = paths[start:start + _CHUNK]
            for path, got in zip(chunk, pool.map(lambda p: _read_one(read, p), chunk),
                                 strict=True):
                if isinstance(got, SkippedFile):
                    skipped.append(got)
                else:
                    yield path, got


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


def backup_vault(ctx: EchoContext, *, keep: int = DEFAULT_KEEP,
                 out: str | None = None) -> Envelope[BackupResult]:
    """Write a dated zip of the vault and keep the newest ``keep`` (see module docstring).

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
    pattern = backup_pattern(name)
    skipped: list[SkippedFile] = []
    paths = []
    for path in storage.list(""):
        if _hidden(path) or pattern.fullmatch(path.rsplit("/", 1)[-1]):
            continue
        if text_problem(path) is None:
            paths.append(path)
        else:
            skipped.append(SkippedFile(path, NOT_UTF8_NAME))
    sweep_stale(folder)  # leftovers of backups killed mid-write
    stamp = now.strftime(_STAMP)
    tmp = folder / temp_name(f"echo-memory-{name}-{stamp}.zip")
    files = size = 0
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.comment = _MARK.format(vault_id).encode("ascii")
            for path, data in _read_all(storage, paths, skipped):
                info = zipfile.ZipInfo(path, date_time=_zip_time(now))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                archive.writestr(info, data)
                files += 1
                size += len(data)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        target = _publish(tmp, folder, name, stamp)
    finally:
        if tmp.exists():
            tmp.unlink()
    fsync_dir(folder)
    removed = rotate(folder, name, keep, vault_id=vault_id, written=target)
    result = BackupResult(str(target), files, size, target.stat().st_size, tuple(skipped),
                          removed, keep)
    message = f"backed up {files} files ({size} bytes) to {target}"
    if skipped:
        message += (f"; skipped {len(skipped)} it could not read: "
                    + ", ".join(s.path for s in skipped))
    lost = [s for s in skipped if s.reason != DELETED]
    if removed:
        message += f"; removed {len(removed)} older backup(s), keeping the newest {keep}"
    if lost:
        message += "; this backup is incomplete: a restore from it would lack them"
    return Envelope(not lost, Action.BACKED_UP, message, result)


def _zip_time(now: _dt.datetime) -> tuple[int, int, int, int, int, int]:
    year = max(1980, now.year)  # the zip format starts in 1980
    return (year, now.month, now.day, now.hour, now.minute, now.second)
