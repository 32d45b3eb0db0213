"""The hidden staging folder an ``export`` into a new folder writes first, and the sweep
of the staging folders that killed exports left behind.

A staging folder sits beside the target and is named after it and its owner:
``.<target>.echo-export-<host>-<pid>-<random>`` (``host`` as in temp file names,
``echo_core.tempfiles.host_tag``). The export renames it into place when every file is
written, or removes it when it stops; only a kill leaves it. ``sweep_staging`` removes
those of one folder whose owner is gone: on this host, the pid no longer alive; from
another host (a synced or shared folder) or named by an older version without its owner
(``.<target>.echo-export-<8 hex>``), older than ``STALE_AFTER``. The staging folder of a
live export is never touched, however old. A process killed but not yet reaped by its
parent (a zombie: some init processes reap orphans late) is gone (``process_running``).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from echo_core.lazy_pattern import LazyPattern
from echo_core.locking import pid_alive
from echo_core.tempfiles import STALE_AFTER, TEMP_NAME_CHARS, host_tag

_OWNED = LazyPattern(r"\..+\.echo-export-([0-9a-f]{8})-(\d+)-[0-9a-f]+")
_UNOWNED = LazyPattern(r"\..+\.echo-export-[0-9a-f]{8}")


def process_running(pid: int) -> bool:
    """Whether the process ``pid`` on this host still runs: it exists
    (``locking.pid_alive``) and, where ``/proc`` tells, is not a zombie (dead, its exit
    status not yet collected)."""
    if not pid_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return True
    state = stat[stat.rfind(b")") + 2:][:1]  # the field after "(command name)"
    return state != b"Z"


def staging_folder(target: Path) -> Path:
    """A new staging folder path for an export into ``target`` (not created)."""
    name = target.name[:TEMP_NAME_CHARS]
    return target.parent / (f".{name}.echo-export-{host_tag()}-{os.getpid()}-"
                            f"{os.urandom(4).hex()}")


def is_stale_staging(name: str, mtime: float, *, now: float,
                     max_age: float = STALE_AFTER) -> bool:
    """Whether the folder ``name`` (modified at ``mtime``) is a staging folder whose
    export is gone (module docstring)."""
    owned = _OWNED.fullmatch(name)
    if owned is not None:
        if owned.group(1) == host_tag():
            return not process_running(int(owned.group(2)))
        return now - mtime > max_age
    return _UNOWNED.fullmatch(name) is not None and now - mtime > max_age


def sweep_staging(folder: Path, *, max_age: float = STALE_AFTER) -> int:
    """Remove the stale staging folders directly in ``folder``; how many. Never raises
    (a folder missing or unreadable sweeps nothing; one that cannot be removed stays)."""
    now = time.time()
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        if ".echo-export-" not in entry.name or not entry.name.startswith("."):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            if is_stale_staging(entry.name, entry.stat(follow_symlinks=False).st_mtime,
                                now=now, max_age=max_age):
                shutil.rmtree(entry.path)
                removed += 1
        except OSError:
            continue
    return removed
