"""Temp files of atomic writes, named after their owner so leftovers can be swept.

Every atomic write (temp file, fsync, rename) in the vault and the state dir names its
temp file ``.<name>.<host>-<pid>-<random>.tmp``. A process killed between creating the
temp file and renaming it leaves that file behind; ``sweep_stale`` removes the temp files
of one folder whose owner is gone: same host and the pid no longer alive, or (any host:
a vault folder may be synced between machines) older than ``max_age`` seconds. A temp
file of a live process on this host is never touched, whatever its age.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

from echo_core.lazy_pattern import LazyPattern
from echo_core.locking import pid_alive

#: Temp files older than this are stale whoever made them (an hour: no write takes that).
STALE_AFTER = 3600.0

_TEMP = LazyPattern(r"\..+\.([0-9a-f]{8})-(\d+)-[0-9a-f]+\.tmp")


def fsync_dir(folder: Path) -> None:
    """Make the renames and creations in ``folder`` durable (its entries flushed to
    stable storage); best effort: nothing where a folder cannot be opened (Windows, where
    renames are durable already) or synced."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@functools.cache
def host_tag() -> str:
    """This host's tag in temp file names: 8 hex digits of the sha256 of its name
    (computed on first use: hashlib and the host name cost a start-up that writes
    nothing)."""
    from echo_core import digests

    if hasattr(os, "uname"):
        name = os.uname().nodename
    else:  # pragma: no cover - Windows
        import socket

        name = socket.gethostname()
    return digests.sha256(name.encode("utf-8")).hexdigest()[:8]


#: Characters of the target's name kept in its temp file's name (so a temp file name
#: stays within 255 bytes whatever the target's length: 64 x 3 bytes + 36).
TEMP_NAME_CHARS = 64


def temp_name(name: str) -> str:
    """The file name of a new temp file for the file ``name`` (owner-tagged, unique)."""
    return f".{name[:TEMP_NAME_CHARS]}.{host_tag()}-{os.getpid()}-{os.urandom(6).hex()}.tmp"


def is_stale_temp(name: str, mtime: float, *, now: float, max_age: float = STALE_AFTER) -> bool:
    """Whether the file ``name`` (modified at ``mtime``) is a temp file whose writer is gone."""
    match = _TEMP.fullmatch(name)
    if match is None:
        return False
    if match.group(1) == host_tag():
        return not pid_alive(int(match.group(2)))
    return now - mtime > max_age


def sweep_stale(folder: str | os.PathLike[str], *, max_age: float = STALE_AFTER) -> int:
    """Remove the stale temp files directly in ``folder`` (not below it); return how many.

    Never raises: a folder that is missing or unreadable sweeps nothing, a file that
    vanished meanwhile is skipped."""
    now = time.time()
    removed = 0
    try:
        entries = os.scandir(folder)
    except OSError:
        return 0
    with entries:
        for entry in entries:
            if not entry.name.endswith(".tmp") or not entry.name.startswith("."):
                continue
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                if is_stale_temp(entry.name, entry.stat(follow_symlinks=False).st_mtime,
                                 now=now, max_age=max_age):
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue
    return removed


def sweep_tree(folder: str | os.PathLike[str], *, max_age: float = STALE_AFTER) -> int:
    """``sweep_stale`` in ``folder`` and every folder below it (for maintenance verbs)."""
    removed = 0
    for current, _dirs, _files in os.walk(Path(folder)):
        removed += sweep_stale(current, max_age=max_age)
    return removed
