"""``backup --verify PATH``: check a backup zip, or the folder it was unzipped into,
against the manifest it carries (``backup_entries.MANIFEST_NAME``).

Every file the manifest lists is read whole and its size and SHA-256 compared: a file
that is not there is *missing*; one that cannot be read (a zip entry whose CRC or
compressed data is bad) or whose bytes differ is *damaged*. A file there that the
manifest does not list is *extra* (in a folder: any file except hidden ones other than
the note history's ``.echo-history/``; ``.obsidian/`` and the like are not the backup's).
A zip that cannot be opened (cut short, not a zip), or a zip or folder without a readable
manifest (a backup written before backups carried one, or not an echo-memory backup),
is reported as ``unreadable``, with a zip's entries still CRC-checked.

``ok`` (exit 0) only when nothing is missing, extra, damaged or unreadable; otherwise
exit 1, every problem named. Reads only; needs no vault.
"""

from __future__ import annotations

import functools
import hashlib
import os
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import attrs

from echo_core.actions import Action
from echo_core.errors import usage_error
from echo_core.models import Envelope
from echo_core.ops.backup_entries import MANIFEST_NAME, ManifestFile, read_manifest
from echo_core.ops.backup_history import HISTORY_FOLDER

_BLOCK = 1 << 20
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError,
                ValueError)


@attrs.frozen
class DamagedFile:
    """A file of the backup that cannot be read or whose bytes are not the manifest's."""

    path: str
    reason: str


@attrs.frozen
class VerifyResult:
    """What ``backup --verify`` found in the backup at ``path``: the ``files`` and
    ``bytes`` its manifest lists, the vault id it names, and every file ``missing``,
    ``extra`` or ``damaged``; ``unreadable`` says why the zip or its manifest could not
    be read at all ("" when it could)."""

    path: str
    files: int
    bytes: int
    vault_id: str
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    damaged: tuple[DamagedFile, ...]
    unreadable: str = ""


def _digest(handle: IO[bytes]) -> tuple[int, str]:
    """Size and SHA-256 of what ``handle`` reads, a block at a time."""
    sha, size = hashlib.sha256(), 0
    while block := handle.read(_BLOCK):
        sha.update(block)
        size += len(block)
    return size, sha.hexdigest()


def _check(entry: ManifestFile, open_it: Callable[[], IO[bytes]]) -> DamagedFile | None:
    """Why the file ``entry`` lists is damaged, or None when its bytes are the listed ones."""
    try:
        with open_it() as handle:
            size, sha = _digest(handle)
    except _READ_ERRORS as exc:
        return DamagedFile(entry.path, f"unreadable: {exc}")
    if size != entry.size:
        return DamagedFile(entry.path, f"{size} bytes, the manifest says {entry.size}")
    if sha != entry.sha256:
        return DamagedFile(entry.path, "its bytes differ from the manifest's (SHA-256)")
    return None


def _crc_damage(archive: zipfile.ZipFile, names: list[str]) -> list[DamagedFile]:
    """The entries among ``names`` that cannot be read whole (bad CRC or data)."""
    found = []
    for name in names:
        try:
            with archive.open(name) as handle:
                _digest(handle)
        except _READ_ERRORS as exc:
            found.append(DamagedFile(name, f"unreadable: {exc}"))
    return found


def _verify_zip(path: Path) -> VerifyResult:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        return VerifyResult(str(path), 0, 0, "", (), (), (),
                            f"not a readable zip ({exc}): cut short, or not a backup")
    with archive:
        names = [i.filename for i in archive.infolist() if not i.is_dir()]
        counts = Counter(names)
        twice = [DamagedFile(n, f"in the zip {c} times") for n, c in counts.items() if c > 1]
        try:
            listed, vault_id = read_manifest(archive.read(MANIFEST_NAME))
        except KeyError:
            why = (f"no manifest {MANIFEST_NAME} (a backup written before backups carried "
                   "one, or not an echo-memory backup); entries CRC-checked only")
        except _READ_ERRORS as exc:
            why = f"the manifest cannot be read ({exc}); entries CRC-checked only"
        else:
            why = ""
        if why:
            return VerifyResult(str(path), 0, 0, "", (), (),
                                tuple(twice + _crc_damage(archive, list(counts))), why)
        missing = tuple(p for p in listed if p not in counts)
        damaged = [d for entry in listed.values() if entry.path in counts
                   if (d := _check(entry, functools.partial(archive.open, entry.path)))
                   is not None]
        extra = tuple(n for n in counts if n not in listed and n != MANIFEST_NAME)
    return _result(path, listed, vault_id, missing, extra, tuple(twice + damaged))


def _folder_files(root: Path) -> Iterator[str]:
    """The files under ``root`` a backup could have put there (see module docstring)."""
    for top, dirs, files in os.walk(root):
        rel = Path(top).relative_to(root).as_posix()
        head = "" if rel == "." else rel + "/"
        dirs[:] = [d for d in dirs if not d.startswith(".")
                   or f"{head}{d}/" == HISTORY_FOLDER]
        inside_history = head.startswith(HISTORY_FOLDER)
        for name in files:
            if not name.startswith(".") or inside_history:
                yield head + name


def _opener(target: Path) -> Callable[[], IO[bytes]]:
    def open_it() -> IO[bytes]:
        return target.open("rb")

    return open_it


def _safe(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and ".." not in parts and "" not in parts


def _verify_folder(path: Path) -> VerifyResult:
    try:
        listed, vault_id = read_manifest((path / MANIFEST_NAME).read_bytes())
    except FileNotFoundError:
        return VerifyResult(str(path), 0, 0, "", (), (), (),
                            f"no manifest {MANIFEST_NAME} in this folder (unzip the whole "
                            "backup into an empty folder, then verify that folder)")
    except (OSError, ValueError) as exc:
        return VerifyResult(str(path), 0, 0, "", (), (), (), f"the manifest cannot be read: {exc}")
    missing, damaged = [], []
    for entry in listed.values():
        target = path / entry.path
        if not _safe(entry.path):
            damaged.append(DamagedFile(entry.path, "the manifest names a path outside the folder"))
        elif not target.is_file():
            missing.append(entry.path)
        elif (found := _check(entry, _opener(target))) is not None:
            damaged.append(found)
    extra = tuple(rel for rel in sorted(_folder_files(path)) if rel not in listed)
    return _result(path, listed, vault_id, tuple(missing), extra, tuple(damaged))


def _result(path: Path, listed: dict[str, ManifestFile], vault_id: str,
            missing: tuple[str, ...], extra: tuple[str, ...],
            damaged: tuple[DamagedFile, ...]) -> VerifyResult:
    return VerifyResult(str(path), len(listed), sum(e.size for e in listed.values()), vault_id,
                        missing, extra, damaged)


def verify_backup(path: str) -> Envelope[VerifyResult]:
    """Check the backup zip (or unzipped folder) at ``path`` against its manifest (see
    the module docstring). ``ok`` False when anything is missing, extra, damaged or
    unreadable. Errors: 2 when ``path`` is neither a file nor a folder. Reads only."""
    where = Path(path).expanduser()
    if where.is_dir():
        result = _verify_folder(where)
    elif where.is_file():
        result = _verify_zip(where)
    else:
        raise usage_error(f"no backup at {path!r}: give a backup zip, or the folder one was "
                          "unzipped into")
    problems = len(result.missing) + len(result.extra) + len(result.damaged)
    ok = not problems and not result.unreadable
    if ok:
        message = (f"backup is whole: {result.files} files ({result.bytes} bytes) match its "
                   "manifest")
    else:
        counts = (f"{len(result.missing)} missing, {len(result.damaged)} damaged, "
                  f"{len(result.extra)} extra")
        if result.unreadable:
            message = f"backup is damaged: {result.unreadable}" + (f"; {counts}" if problems
                                                                   else "")
        else:
            message = f"backup is damaged: {counts}; do not restore from it alone"
    return Envelope(ok, Action.READ, message, result)


def describe(env: Envelope[VerifyResult]) -> str:
    """The verdict, then one line per problem (every one: ``missing: PATH``, ``damaged:
    PATH (why)``, ``extra: PATH``)."""
    data = env.data
    lines = [f"{data.path}: {env.message}"]
    lines += [f"  missing: {p}" for p in data.missing]
    lines += [f"  damaged: {d.path} ({d.reason})" for d in data.damaged]
    lines += [f"  extra: {p}" for p in data.extra]
    return "\n".join(lines)
