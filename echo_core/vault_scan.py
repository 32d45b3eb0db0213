"""What a backend can say about the vault's files without reading them.

A backend may offer optional methods (the folder backend does): ``scan_tree`` (every
file's size and mtime and every folder's mtime, one walk), ``list_tree`` (a listing and
its folders' mtimes), ``folder_stamps`` and ``file_stamps`` (stats of some folders or
files). These functions use them when present and fall back to the ``Storage``
protocol's ``list`` and ``stat`` otherwise (a remote backend: no folder stamps, so only a
file's own stat shows that it changed).
"""

from __future__ import annotations

from collections.abc import Sequence

from echo_core.errors import EchoError, ExitCode
from echo_core.models import TreeScan
from echo_core.paths import refused_paths
from echo_core.protocols import Storage


def _ns(mtime: float) -> int:
    return round(mtime * 1e9)


def scan_tree(storage: Storage, suffix: str = "", prune: Sequence[str] = ()) -> TreeScan:
    """Every file of the vault (ending with ``suffix`` when given; none under the folders
    ``prune`` names) with its ``(size, mtime_ns)``, and folder stamps when the backend has
    them."""
    native = getattr(storage, "scan_tree", None)
    if callable(native):
        found: TreeScan = native("", suffix, prune)
        return found
    below = tuple(f"{folder}/" for folder in prune)
    listed = [p for p in storage.list("") if p.endswith(suffix) and not p.startswith(below)]
    stats = file_stamps(storage, listed)
    return TreeScan({p: s for p, s in stats.items() if s is not None})


def scan_tree_under(storage: Storage, folder: str, suffix: str = "") -> TreeScan:
    """``scan_tree`` of one folder (recursive); needs a backend with folder stamps."""
    found: TreeScan = storage.scan_tree(folder, suffix)  # type: ignore[attr-defined]
    return found


def scan_folder(storage: Storage, folder: str) -> TreeScan:
    """The files directly in ``folder`` and its direct sub-folders; needs a backend with
    folder stamps (``has_folder_stamps``)."""
    found: TreeScan = storage.scan_folder(folder)  # type: ignore[attr-defined]
    return found


def has_folder_stamps(storage: Storage) -> bool:
    """Whether the backend stamps folders (adding or removing a file changes its
    folder's stamp): then a short check can skip folders whose stamp is unchanged."""
    return callable(getattr(storage, "folder_stamps", None))


def folder_stamps(storage: Storage, folders: Sequence[str]) -> dict[str, int | None]:
    """Each folder's ``mtime_ns`` (None: gone); ``{}`` when the backend has no stamps."""
    native = getattr(storage, "folder_stamps", None)
    if not callable(native):
        return {}
    found: dict[str, int | None] = native(folders)
    return found


def file_stamps(storage: Storage, paths: Sequence[str]) -> dict[str, tuple[int, int] | None]:
    """Each file's ``(size, mtime_ns)``; None for a file gone, and for one whose path no
    read takes (``paths.refused_paths``: a name made by hand, or a path an older version
    recorded before the rule refused it), so a check drops it from the indexes."""
    refused = frozenset(refused_paths(paths))
    wanted = [p for p in paths if p not in refused] if refused else paths
    native = getattr(storage, "file_stamps", None)
    if callable(native):
        stamps: dict[str, tuple[int, int] | None] = native(wanted)
        stamps.update(dict.fromkeys(refused))
        return stamps
    found: dict[str, tuple[int, int] | None] = dict.fromkeys(refused)
    for path in wanted:
        try:
            st = storage.stat(path)
        except EchoError as exc:
            if exc.code != ExitCode.NOT_FOUND:
                raise
            found[path] = None
            continue
        found[path] = (st.size, _ns(st.mtime))
    return found


def list_tree(storage: Storage, folder: str) -> tuple[list[str], dict[str, int | None]] | None:
    """``storage.list(folder)`` and the ``mtime_ns`` of every folder it walked (None: not
    a folder), each taken before that folder was listed, when the backend can (None
    otherwise): the listing stands while ``folder_stamps`` of those folders match."""
    native = getattr(storage, "list_tree", None)
    if not callable(native):
        return None
    found: tuple[list[str], dict[str, int | None]] = native(folder)
    return found


def file_digests(storage: Storage, paths: Sequence[str]) -> dict[str, str | None] | None:
    """The content hash of each file (as ``entities.content_hash`` of its text) when the
    backend can hash without decoding (None otherwise: read the texts instead)."""
    native = getattr(storage, "file_digests", None)
    if not callable(native):
        return None
    found: dict[str, str | None] = native(paths)
    return found
