"""``import --from DIR`` of a folder holding ``.echo-history/`` (an unzipped backup:
``backup_history``): its note-history versions merged into the vault's history
(``NoteHistory.merge``: the state dir's, or the store's for a backend that shares it), so
``history`` and ``restore`` work after a restore from a backup.

The folder is read as untrusted input, never followed out of itself: the folder, each
ring folder (named by 16 hex digits) and each file are opened without following a
symbolic link (one is skipped), a ring's log over ``LOG_CAP`` bytes or a text over
``NOTE_CAP`` is skipped, and so is a log line that is not a version (not JSON, a path
that breaks the vault's path rules or is not the ring's, no SHA-256, no ISO time: one
entry per log) and a text whose bytes are not its SHA-256 or not UTF-8. The history's
own lists (``paths.ndjson``, ``paths-scanned.ndjson``) are not read (they are rebuilt
from the rings); its renames (``renames.ndjson``, at most ``LOG_CAP`` bytes) are
recorded in the vault's (``NoteHistory.record_rename``: a pair held already adds
nothing), a pair with a path that breaks the path rules or that the import left out is
skipped; a text no log line names is not a version and is ignored; any other
entry is skipped. The vault's history is written only through its ``HistoryFiles``,
under the ring folder of a path's hash and a text's SHA-256, so nothing lands outside it.
A path the import left out (``left_out`` says why: a skipped file, the vault's own
files it kept) brings no versions. Every entry left out is reported
(``HistoryImport.skipped``, named by its place under ``.echo-history/``); importing the
same folder again adds nothing.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import attrs

from echo_core import digests
from echo_core.errors import EchoError
from echo_core.history import (
    INDEX_NAME,
    PATHS_LOG,
    PATHS_SCANNED,
    RENAMES_LOG,
    Merged,
    NoteHistory,
    Version,
    path_key,
    rename_pairs,
)
from echo_core.history_files import HISTORY_PREFIX, STAGING_DIR
from echo_core.ops.vault_transfer_io import NOTE_CAP, TransferSkip
from echo_core.paths import normalize_path

#: The most bytes a ring's log may hold (a real one: at most ~41 short lines).
LOG_CAP = 1024 * 1024
_SHA = re.compile(r"[0-9a-f]{64}")
_RING = re.compile(r"[0-9a-f]{16}")
_TIME_CHARS = 64
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_LINK = "a symbolic link or not a folder; not followed"


@attrs.frozen
class HistoryImport:
    """What ``import_history`` did: ``versions`` added to the vault's history,
    ``already`` there (the same text of the same path), and the entries ``skipped``
    (each under ``.echo-history/``, and why); ``found``: the folder has a
    ``.echo-history`` entry."""

    versions: int = 0
    already: int = 0
    skipped: tuple[TransferSkip, ...] = ()
    found: bool = False


class _Skip(Exception):
    """An entry of the folder's history that is not imported (the message says why)."""


def import_history(history: NoteHistory, root: Path,
                   left_out: Callable[[str], str]) -> HistoryImport:
    """Merge ``root/.echo-history`` into ``history`` (module docstring); ``left_out``
    gives why the import left a vault path out ("" when it did not). Errors:
    ``OSError`` when the vault's history cannot be written (the folder's unreadable
    entries are skipped, never raised)."""
    skipped: list[TransferSkip] = []
    try:
        top = os.open(root / HISTORY_PREFIX, _OPEN | os.O_DIRECTORY)
    except FileNotFoundError:
        return HistoryImport()
    except OSError as exc:
        why = _LINK if _is_link(exc) else f"cannot be read ({exc.strerror})"
        return HistoryImport(skipped=(TransferSkip(HISTORY_PREFIX, why),), found=True)
    versions = already = 0
    try:
        for ring, fd in _rings(top, skipped):
            try:
                done = _merge_ring(history, ring, fd, left_out, skipped)
            finally:
                os.close(fd)
            versions += len(done.added)
            already += len(done.already)
        _merge_renames(history, top, left_out, skipped)
    finally:
        os.close(top)
    return HistoryImport(versions, already, tuple(skipped), found=True)


def _merge_renames(history: NoteHistory, top: int, left_out: Callable[[str], str],
                   skipped: list[TransferSkip]) -> None:
    """Record the folder's renames (``RENAMES_LOG``) in ``history``: each pair whose two
    paths keep the path rules and were not left out; the others to ``skipped``."""
    try:
        os.stat(RENAMES_LOG, dir_fd=top, follow_symlinks=False)
    except FileNotFoundError:
        return  # a backup made before renames were recorded
    except OSError:
        pass  # _read says why
    try:
        data = _read(top, RENAMES_LOG, LOG_CAP)
    except _Skip as why:
        skipped.append(TransferSkip(_where(RENAMES_LOG), str(why)))
        return
    for (old, new), line in rename_pairs(data).items():
        try:
            clean = (normalize_path(old), normalize_path(new))
        except EchoError as exc:
            skipped.append(TransferSkip(_where(RENAMES_LOG), f"a rename of a path that "
                                        f"cannot be a note path ({exc.message})"))
            continue
        if left_out(clean[0]) or left_out(clean[1]):
            continue
        at = json.loads(line).get("at")
        history.record_rename(*clean, at=at if _iso_time(at) else "")


def _iso_time(value: object) -> bool:
    """Whether ``value`` is a short ISO time text."""
    if not isinstance(value, str) or len(value) > _TIME_CHARS:
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _is_link(exc: OSError) -> bool:
    """Whether opening without following links failed on a link (or a non-folder)."""
    return exc.errno in (errno.ELOOP, errno.ENOTDIR)


def _where(*parts: str) -> str:
    return "/".join((HISTORY_PREFIX, *parts))


def _rings(top: int, skipped: list[TransferSkip]) -> Iterator[tuple[str, int]]:
    """Each ring folder of the history (its name, an open descriptor, closed by the
    caller), sorted; any other entry, and a ring that is a link, to ``skipped``."""
    with os.scandir(top) as entries:
        names = sorted(e.name for e in entries)
    for name in names:
        if name in (PATHS_LOG, PATHS_SCANNED, RENAMES_LOG, STAGING_DIR):
            continue
        if not _RING.fullmatch(name):
            skipped.append(TransferSkip(_where(name), "not a note-history entry"))
            continue
        try:
            fd = os.open(name, _OPEN | os.O_DIRECTORY, dir_fd=top)
        except OSError as exc:
            why = _LINK if _is_link(exc) else f"cannot be read ({exc.strerror})"
            skipped.append(TransferSkip(_where(name), why))
            continue
        yield name, fd


def _read(folder: int, name: str, cap: int) -> bytes:
    """The bytes of the regular file ``name`` in ``folder`` (not through a link, and
    nothing else opened: a FIFO would block), at most ``cap``; ``_Skip`` otherwise."""
    try:
        kind = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
        if stat.S_ISLNK(kind):
            raise _Skip("a symbolic link; not followed")
        if not stat.S_ISREG(kind):
            raise _Skip("not a regular file")
        fd = os.open(name, _OPEN | os.O_NONBLOCK, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Skip("a symbolic link; not followed") from None
        raise _Skip(f"cannot be read ({exc.strerror})") from None
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise _Skip("not a regular file")
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise _Skip(f"over {cap:,} bytes; not a note-history file")
    return data


def _merge_ring(history: NoteHistory, ring: str, folder: int, left_out: Callable[[str], str],
                skipped: list[TransferSkip]) -> Merged:
    """Merge one ring folder of the source (``history.merge``)."""
    with os.scandir(folder) as entries:
        names = {e.name for e in entries}
    for name in sorted(names - {INDEX_NAME}):
        if not _SHA.fullmatch(name):
            skipped.append(TransferSkip(_where(ring, name), "not a note-history entry"))
    try:
        log = _read(folder, INDEX_NAME, LOG_CAP)
    except _Skip as why:
        skipped.append(TransferSkip(_where(ring, INDEX_NAME), str(why)))
        return Merged()
    path, offered = _versions(ring, log, skipped)
    if not offered:
        return Merged()
    reason = left_out(path)
    if reason:
        skipped.extend(TransferSkip(_where(ring, v.sha), f"a version of {path}, which the "
                                    f"import left out ({reason})") for v in offered)
        return Merged()

    def text_of(version: Version) -> bytes | None:
        try:
            data = _read(folder, version.sha, NOTE_CAP)
            if digests.sha256(data).hexdigest() != version.sha:
                raise _Skip("its bytes do not match its SHA-256 (damaged)")
            data.decode("utf-8")
        except UnicodeDecodeError:
            why = "not UTF-8 text"
        except _Skip as exc:
            why = str(exc)
        else:
            return data
        skipped.append(TransferSkip(_where(ring, version.sha),
                                    f"version {version.version_id} of {path}: {why}"))
        return None

    done = history.merge(path, offered, text_of)
    skipped.extend(TransferSkip(_where(ring, v.sha), f"version {v.version_id} of {path}: "
                                f"older than the {history.ring_size} versions its history "
                                "keeps") for v in done.no_room)
    return done


def _versions(ring: str, log: bytes, skipped: list[TransferSkip]) -> tuple[str, list[Version]]:
    """The note path of the ring and the versions its log lists (only ``sha`` and
    ``saved_at`` are taken); the lines that are not versions are one ``skipped`` entry."""
    path = ""
    offered: list[Version] = []
    bad: list[str] = []
    for number, line in enumerate(log.decode("utf-8", "replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            version = _version(ring, line)
            if path and version.path != path:
                raise _Skip(f"its path {version.path!r} is not the ring's {path!r}")
        except _Skip as why:
            bad.append(f"line {number}: {why}")
            continue
        path = version.path
        offered.append(version)
    if bad:
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        skipped.append(TransferSkip(_where(ring, INDEX_NAME),
                                    f"{len(bad)} line(s) not a version, skipped: {bad[0]}{more}"))
    return path, offered


def _version(ring: str, line: str) -> Version:
    """One log line as a ``Version`` (id, sha, time and path; size and headline are the
    text's, set when it is merged); ``_Skip`` when it is not one of this ring."""
    try:
        item = json.loads(line)
    except ValueError:
        raise _Skip("not JSON") from None
    if not isinstance(item, dict):
        raise _Skip("not a JSON object")
    path, sha, saved_at = item.get("path"), item.get("sha"), item.get("saved_at")
    if not isinstance(path, str) or not path:
        raise _Skip("no note path")
    try:
        clean = normalize_path(path)
    except EchoError as exc:
        raise _Skip(exc.message) from None
    if clean != path or any(part.startswith(".") for part in path.split("/")):
        raise _Skip(f"{path!r} is not a vault path a note may have")
    if path_key(path) != ring:
        raise _Skip(f"the history of {path!r} is not kept in ring {ring}")
    if not isinstance(sha, str) or not _SHA.fullmatch(sha):
        raise _Skip("no SHA-256 of its text")
    if not isinstance(saved_at, str) or len(saved_at) > _TIME_CHARS:
        raise _Skip("no time it was kept")
    try:
        datetime.fromisoformat(saved_at)
    except ValueError:
        raise _Skip(f"{saved_at!r} is not an ISO time") from None
    return Version(sha[:12], sha, saved_at, 0, "", path)
