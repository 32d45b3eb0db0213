"""The session-log listing ``load`` counts from (SPEC §4.1, §4.2: sessions logged, and
logged since the scope was set), kept per machine so that a session start does not list
thousands of logs when none came, went or was renamed.

``SessionLogsSource(ctx)`` is the ``ReadSource`` ``load`` reads the vault through: every
read and listing goes to the vault's storage, except the listing of ``_agent/sessions``
on a backend that can say which folders a listing walked (``vault_scan.list_tree``: the
folder backend). That listing is saved in ``<state_dir>/session-logs.marshal`` with the
mtime of every folder it walked, each taken before that folder was listed; while one
stat of each of those folders gives the same mtimes, the saved listing is the one
``list`` would give (a file added, removed or renamed moves its folder's mtime, a folder
added or removed its parent's) and is served without listing. A listing whose folders
changed in the last ``SETTLE_NS`` is not saved (an mtime can hold still for a few
milliseconds while a folder changes again). Any other backend lists every time.

It is a cache: deleting it costs one listing; an unreadable one is listed again.
"""

from __future__ import annotations

import marshal
import os
import time
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from echo_core.ops.scope import SESSIONS_DIR
from echo_core.vault_scan import folder_stamps, list_tree

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.protocols import Storage

FILE_NAME = "session-logs.marshal"
_FORMAT = 1
#: A folder changed less than this long (ns) before the listing: not saved.
SETTLE_NS = 2_000_000_000


class SessionLogsSource:
    """The vault's storage as ``load``'s ``ReadSource``, the session-log listing served
    from the per-machine cache while it stands (module docstring)."""

    def __init__(self, ctx: EchoContext) -> None:
        self.storage: Storage = ctx.vault.storage
        self.cache = Path(ctx.state_dir) / FILE_NAME

    def read(self, path: str) -> str:
        """The storage's read."""
        return self.storage.read(path)

    def list(self, prefix: str = "") -> list[str]:
        """The storage's listing (the session logs' from the cache when it stands)."""
        if prefix.strip("/") != SESSIONS_DIR:
            return self.storage.list(prefix)
        return session_logs(self.storage, self.cache)


def session_logs(storage: Storage, cache: Path) -> list[str]:
    """``storage.list(SESSIONS_DIR)``, from ``cache`` while no folder under it changed."""
    saved = _load(cache)
    if saved is not None:
        folders, names = saved
        if folder_stamps(storage, sorted(folders)) == folders:
            return list(names)
    started = time.time_ns()
    listed = list_tree(storage, SESSIONS_DIR)
    if listed is None:
        return storage.list(SESSIONS_DIR)
    names, folders = listed
    if all(mtime is None or mtime < started - SETTLE_NS for mtime in folders.values()):
        _save(cache, folders, names)
    else:
        with suppress(OSError):
            cache.unlink()
    return names


def _load(cache: Path) -> tuple[dict[str, int | None], list[str]] | None:
    try:
        loaded = marshal.loads(cache.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if (not isinstance(loaded, tuple) or len(loaded) != 3 or loaded[0] != _FORMAT
            or not isinstance(loaded[1], dict) or not isinstance(loaded[2], list)):
        return None
    return loaded[1], loaded[2]


def _save(cache: Path, folders: dict[str, int | None], names: list[str]) -> None:
    """Write the cache whole (a temp file renamed over it; no fsync: a lost or torn one
    is listed again)."""
    tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(marshal.dumps((_FORMAT, folders, names)))
        os.replace(tmp, cache)
    except OSError:
        with suppress(OSError):
            tmp.unlink()
