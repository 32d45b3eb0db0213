"""``OverlayStorage``: a vault seen through writes kept in memory (``reflect``'s preview).

Reads fall through to the real storage except for the files the overlay wrote or deleted,
which it answers itself; ``write``, ``append_line`` and ``delete`` change only the
overlay, never the real vault. ``lock`` is the real vault's lock, so a preview reads the
vault as a capture would. ``stat`` of a file the overlay wrote gives its UTF-8 size and a
time later than any it gave before, so readers keyed on ``(size, mtime)`` (the entity
name cache) see each change.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager

from echo_core.errors import not_found
from echo_core.models import FileStat
from echo_core.paths import normalize_path
from echo_core.protocols import Storage
from echo_core.storage_base import StorageBase


class OverlayStorage(StorageBase):
    """``base`` as it would be after the writes made to this object (module docstring).
    Errors are those of ``base`` (44 absent, 2 bad path, ``BackendUnavailable``)."""

    def __init__(self, base: Storage) -> None:
        self.base = base
        self.identity = f"preview+{base.identity}"
        #: path -> text written here, None for a file deleted here
        self.changed: dict[str, str | None] = {}
        self._stats: dict[str, FileStat] = {}
        self._clock = 0.0

    def read(self, path: str) -> str:
        """The overlay's text of ``path`` if it wrote or deleted it, else the base's."""
        rel = normalize_path(path)
        if rel not in self.changed:
            return self.base.read(rel)
        text = self.changed[rel]
        if text is None:
            raise not_found(f"no file {rel!r} in the vault (deleted by the preview)")
        return text

    def read_many(self, paths: Sequence[str]) -> dict[str, str | None]:
        """``read`` of each path (None when absent), the base's in one ``read_many``."""
        clean = {given: normalize_path(given) for given in paths}
        rest = [given for given, rel in clean.items() if rel not in self.changed]
        found = self.base.read_many(rest) if rest else {}
        return {given: self.changed[rel] if rel in self.changed else found.get(given)
                for given, rel in clean.items()}

    def write(self, path: str, text: str) -> None:
        """Keep ``text`` for ``path`` in memory; the base is not touched."""
        rel = normalize_path(path)
        self._clock = max(time.time(), self._clock + 0.001)
        self.changed[rel] = text
        self._stats[rel] = FileStat(path=rel, size=len(text.encode("utf-8")), mtime=self._clock)

    def delete(self, path: str) -> None:
        """Forget ``path`` in the overlay (44 when it is absent here and in the base)."""
        rel = normalize_path(path)
        self.stat(rel)
        self.changed[rel] = None
        self._stats.pop(rel, None)

    def list(self, prefix: str = "") -> list[str]:
        """The base's files under ``prefix`` with the overlay's added and deleted ones."""
        rel = normalize_path(prefix, allow_root=True)
        folder = rel.rstrip("/") + "/" if rel else ""
        paths = set(self.base.list(prefix))
        for path, text in self.changed.items():
            if not path.startswith(folder) or any(
                    part.startswith(".") for part in path.split("/")):
                continue
            if text is None:
                paths.discard(path)
            else:
                paths.add(path)
        return sorted(paths)

    def stat(self, path: str) -> FileStat:
        """The overlay's size and time for a file it wrote, else the base's."""
        rel = normalize_path(path)
        if rel not in self.changed:
            return self.base.stat(rel)
        if self.changed[rel] is None:
            raise not_found(f"no file {rel!r} in the vault (deleted by the preview)")
        return self._stats[rel]

    def lock(self, timeout: float = 10.0) -> AbstractContextManager[None]:
        """The real vault's lock."""
        return self.base.lock(timeout)

    def ping(self) -> None:
        """The base's ``ping``."""
        self.base.ping()
