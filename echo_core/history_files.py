"""Where note history keeps its files: a local folder, or the vault's own store.

``NoteHistory`` (``echo_core.history``) reads and writes a few small files per note (a
log and one blob per text) through a ``HistoryFiles``: names are ``/``-separated and
relative to the history's root.

* ``LocalHistoryFiles``: a folder on this machine (``<state_dir>/history``), the default.
* ``StorageHistoryFiles``: files under ``HISTORY_PREFIX`` in the vault's storage, for a
  backend whose ``shared_history`` is true (PostgreSQL): every machine sharing the vault
  sees the same versions. The folder is hidden, so it is never a note, never indexed and
  never exported.

Both are called with the vault lock held (note writes hold it), so a log append may be a
read and a rewrite.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from echo_core.tempfiles import sweep_stale, temp_name

if TYPE_CHECKING:
    from echo_core.protocols import Storage

__all__ = ["HISTORY_PREFIX", "STAGING_DIR", "HistoryFiles", "LocalHistoryFiles",
           "StorageHistoryFiles", "history_files"]

#: The hidden folder of a shared history inside the vault's storage.
HISTORY_PREFIX = ".echo-history"


class HistoryFiles(Protocol):
    """The file operations ``NoteHistory`` needs."""

    def read(self, rel: str) -> bytes | None:
        """The file's bytes, None when absent or unreadable."""
        ...

    def write(self, rel: str, data: bytes) -> None:
        """Create or replace the file (atomically where the backend can)."""
        ...

    def append(self, rel: str, text: str) -> None:
        """Add ``text`` at the file's end (created when missing)."""
        ...

    def delete(self, rel: str) -> None:
        """Remove the file (no error when absent)."""
        ...

    def names(self, folder: str) -> list[str]:
        """The names of the files directly in ``folder`` ([] when none)."""
        ...

    def folders(self) -> list[str]:
        """The names of the folders directly under the root (the rings; [] when none)."""
        ...

    def where(self, rel: str) -> str:
        """Where ``rel`` lives, for messages."""
        ...


#: The folder of a local history's temp files. One folder for every note's writes, so
#: each write sweeps what any killed write left: a note's own folder is only written
#: again when that note is, which may be never.
STAGING_DIR = ".staging"


class LocalHistoryFiles:
    """History files in a local folder (created on first write). A write goes through a
    temp file in ``STAGING_DIR`` renamed into place; every write and append (each kept
    version makes one, even when its blob is already there) first sweeps the temp files
    there whose writer is gone (``tempfiles.sweep_stale``)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _staging(self) -> Path:
        """``STAGING_DIR``, made when missing and swept of dead writers' temp files."""
        staging = self.root / STAGING_DIR
        staging.mkdir(parents=True, exist_ok=True)
        sweep_stale(staging)  # leftovers of writes killed mid-write, for any note
        return staging

    def read(self, rel: str) -> bytes | None:
        try:
            return (self.root / rel).read_bytes()
        except OSError:
            return None

    def write(self, rel: str, data: bytes) -> None:
        target = self.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        sweep_stale(target.parent)  # where earlier versions put their temp files
        tmp = self._staging() / temp_name(target.name)
        try:
            tmp.write_bytes(data)
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                tmp.unlink()

    def append(self, rel: str, text: str) -> None:
        target = self.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        self._staging()
        with open(target, "a", encoding="utf-8") as log:
            log.write(text)

    def delete(self, rel: str) -> None:
        (self.root / rel).unlink(missing_ok=True)

    def names(self, folder: str) -> list[str]:
        try:
            return [c.name for c in (self.root / folder).iterdir() if c.is_file()]
        except OSError:
            return []

    def folders(self) -> list[str]:
        """Not ``STAGING_DIR``."""
        try:
            return [c.name for c in self.root.iterdir() if c.is_dir() and c.name != STAGING_DIR]
        except OSError:
            return []

    def where(self, rel: str) -> str:
        return str(self.root / rel)


class StorageHistoryFiles:
    """History files under ``HISTORY_PREFIX`` in a vault's storage (text files: history
    keeps UTF-8 note texts and JSON lines)."""

    def __init__(self, storage: Storage, prefix: str = HISTORY_PREFIX) -> None:
        self.storage = storage
        self.prefix = prefix.rstrip("/")

    def _path(self, rel: str) -> str:
        return f"{self.prefix}/{rel}"

    def read(self, rel: str) -> bytes | None:
        from echo_core.storage_base import none_if_absent

        try:
            text = none_if_absent(functools.partial(self.storage.read, self._path(rel)))
        except (OSError, ValueError):
            return None
        return None if text is None else text.encode("utf-8")

    def write(self, rel: str, data: bytes) -> None:
        self.storage.write(self._path(rel), data.decode("utf-8"))

    def append(self, rel: str, text: str) -> None:
        current = self.read(rel) or b""
        self.storage.write(self._path(rel), current.decode("utf-8") + text)

    def delete(self, rel: str) -> None:
        from echo_core.errors import EchoError, ExitCode

        try:
            self.storage.delete(self._path(rel))
        except EchoError as exc:
            if exc.code != ExitCode.NOT_FOUND:
                raise

    def names(self, folder: str) -> list[str]:
        """Through the storage's ``list_hidden`` when it has one (``list`` skips hidden
        folders, so without it there is nothing to list: [] and no orphan sweep)."""
        head = f"{self._path(folder)}/"
        lister = getattr(self.storage, "list_hidden", self.storage.list)
        return [p[len(head):] for p in lister(head.rstrip("/"))
                if p.startswith(head) and "/" not in p[len(head):]]

    def folders(self) -> list[str]:
        """Through ``list_hidden``, as ``names`` ([] without it)."""
        head = f"{self.prefix}/"
        lister = getattr(self.storage, "list_hidden", self.storage.list)
        return sorted({p[len(head):].split("/", 1)[0] for p in lister(self.prefix)
                       if p.startswith(head) and "/" in p[len(head):]})

    def where(self, rel: str) -> str:
        return f"{self.storage.identity} {self._path(rel)}"


def history_files(storage: Storage, state_dir: Path) -> HistoryFiles:
    """The storage's own files when it says history is shared (``shared_history``),
    else ``<state_dir>/history``."""
    if getattr(storage, "shared_history", False):
        return StorageHistoryFiles(storage)
    return LocalHistoryFiles(state_dir / "history")
