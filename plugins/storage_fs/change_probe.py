"""The folder backend's change-detection methods (``echo_core.vault_scan`` uses them when
a backend has them): one tree walk with stats, a listing with its folders' stamps, one
folder's entries, folder and file stamps, and content hashes of raw bytes. A mixin of ``FolderStorage``: it needs the
vault root string ``_prefix`` and ``_require_root``."""

from __future__ import annotations

import abc
from collections.abc import Sequence

from echo_core import TreeScan, normalize_path
from plugins.storage_fs.tree_scan import (
    file_digests,
    file_stamps,
    folder_stamps,
    list_tree,
    scan_folder,
    scan_tree,
)


class ChangeProbe(abc.ABC):
    """What a folder can say about its files without reading them."""

    _prefix: str

    @abc.abstractmethod
    def _require_root(self) -> None:
        """Raise when the vault folder is gone (``FolderStorage`` provides it)."""

    def scan_tree(self, prefix: str = "", suffix: str = "",
                  prune: Sequence[str] = ()) -> TreeScan:
        """Every file under ``prefix`` (those ending with ``suffix`` when given, none under
        the folders ``prune`` names) with its size and mtime, and every folder's mtime, in
        one walk (``tree_scan.scan_tree``)."""
        rel = normalize_path(prefix, allow_root=True)
        self._require_root()
        return scan_tree(self._prefix, rel, suffix, prune)

    def list_tree(self, prefix: str) -> tuple[list[str], dict[str, int | None]]:
        """``list(prefix)`` and the mtime of every folder it walked, each taken before
        that folder was listed (``tree_scan.list_tree``): whether a listing is still the
        one ``list`` would give is one stat per folder."""
        rel = normalize_path(prefix, allow_root=True)
        self._require_root()
        if any(part.startswith(".") for part in rel.split("/") if part):
            return [], {rel: None}
        return list_tree(self._prefix, rel)

    def file_digests(self, paths: Sequence[str]) -> dict[str, str | None]:
        """The content hash of each file's bytes (None: gone), without decoding it.
        Paths must be vault paths (as ``scan_tree`` gives them): one leading out of the
        vault is refused (exit 2)."""
        for path in paths:
            if path.startswith("/") or "\\" in path or "\0" in path or "/../" in f"/{path}/":
                normalize_path(path)  # raises, naming the rule
        return file_digests(self._prefix, paths)

    def scan_folder(self, folder: str) -> TreeScan:
        """The files directly in ``folder`` and its direct sub-folders, with stamps."""
        rel = normalize_path(folder, allow_root=True)
        return scan_folder(self._prefix, rel)

    def folder_stamps(self, folders: Sequence[str]) -> dict[str, int | None]:
        """The mtime (ns) of each folder (``""`` the root), None for one gone."""
        return folder_stamps(self._prefix, folders)

    def file_stamps(self, paths: Sequence[str]) -> dict[str, tuple[int, int] | None]:
        """``(size, mtime_ns)`` of each file, None for one gone."""
        return file_stamps(self._prefix, paths)
