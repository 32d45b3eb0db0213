"""A folder vault's tree with each file's size and mtime and each folder's mtime, in one
walk (``os.scandir``: no ``pathlib``, one ``stat`` per entry), for change detection.

The walk sees what ``FolderStorage.list`` sees: hidden names skipped, linked folders not
descended, a linked file kept when it resolves to a file inside the vault.
"""

from __future__ import annotations

import os
import stat as _stat
from collections.abc import Sequence
from pathlib import Path

from echo_core import TreeScan

#: Whether ``os.scandir`` takes a folder descriptor here (Linux, macOS).
_BY_FD = os.scandir in os.supports_fd
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def _hidden(name: str) -> bool:
    return name.startswith(".")


def scan_tree(root: str, rel: str = "", suffix: str = "",
              prune: Sequence[str] = ()) -> TreeScan:
    """Files and folders under ``rel`` of the vault at ``root`` (an absolute path string);
    with ``suffix`` only files whose name ends with it are listed; folders named in
    ``prune`` (vault paths) are left out with everything below them; an absent folder
    gives an empty scan."""
    files: dict[str, tuple[int, int]] = {}
    folders: dict[str, int] = {}
    real_root = Path(os.path.realpath(root))
    start = f"{root}/{rel}" if rel else root
    try:
        folders[rel] = os.stat(start).st_mtime_ns
    except OSError:
        return TreeScan(files, folders={})
    is_dir, is_reg, is_link = _stat.S_ISDIR, _stat.S_ISREG, _stat.S_ISLNK
    pruned = frozenset(prune)
    stack = [(start, f"{rel}/" if rel else "")]
    while stack:
        where, prefix = stack.pop()
        try:
            # by a folder descriptor where the platform can: each stat then looks up one
            # name in that folder, not the whole path from the root (a third faster)
            handle = os.open(where, _DIR_FLAGS) if _BY_FD else None
        except OSError:
            continue
        try:
            entries = os.scandir(handle if handle is not None else where)
        except OSError:
            if handle is not None:
                os.close(handle)
            continue
        try:
            with entries:
                for entry in entries:
                    name = entry.name
                    if name[0] == ".":
                        continue
                    try:
                        found: os.stat_result | None = entry.stat(follow_symlinks=False)
                        if found is not None and is_link(found.st_mode):
                            found = _linked_file(f"{where}/{name}", real_root)
                    except OSError:
                        continue
                    if found is None:
                        continue
                    mode = found.st_mode
                    if is_dir(mode):
                        folder = prefix + name
                        if folder not in pruned:
                            folders[folder] = found.st_mtime_ns
                            stack.append((f"{where}/{name}", folder + "/"))
                    elif is_reg(mode) and (not suffix or name.endswith(suffix)):
                        files[prefix + name] = (found.st_size, found.st_mtime_ns)
        finally:
            if handle is not None:
                os.close(handle)
    return TreeScan(files, folders)


def _linked_file(path: str, real_root: Path) -> os.stat_result | None:
    """The stat of the file a link leads to when it stays inside the vault (a linked
    folder is never descended: None)."""
    st = os.stat(path)
    if not _stat.S_ISREG(st.st_mode) or real_root not in Path(os.path.realpath(path)).parents:
        return None
    return st


def list_tree(root: str, rel: str) -> tuple[list[str], dict[str, int | None]]:
    """The files ``FolderStorage.list(rel)`` gives (sorted; the same rules: hidden names
    skipped, linked folders not descended, a linked file kept when it resolves to a file
    inside the vault, a FIFO, socket or device left out: reading a FIFO would block), without a stat of each file, and the ``mtime_ns`` of every folder
    walked (``rel`` itself included; None when it is not a folder), each taken before its
    entries were listed: a file added or removed since moves one of them."""
    found: list[str] = []
    real_root = Path(os.path.realpath(root))
    base = f"{root}/{rel}" if rel else root
    real_base = Path(os.path.realpath(base))
    if not real_base.is_dir() or (real_base != real_root and real_root not in real_base.parents):
        return found, {rel: None}
    folders: dict[str, int | None] = {}
    skip = len(root) + 1
    stack = [base]
    while stack:
        where = stack.pop()
        try:
            folders[where[skip:] if len(where) > len(root) else ""] = os.stat(where).st_mtime_ns
            entries = os.scandir(where)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name[0] == ".":
                    continue
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    if not entry.is_symlink():
                        stack.append(entry.path)
                    continue
                if entry.is_symlink():
                    real = Path(os.path.realpath(entry.path))
                    if real_root not in real.parents or not real.is_file():
                        continue
                elif not entry.is_file():  # a FIFO, socket or device: no file to read
                    continue
                found.append(entry.path[skip:])
    if os.sep != "/":
        found = [p.replace(os.sep, "/") for p in found]
        folders = {f.replace(os.sep, "/"): m for f, m in folders.items()}
    found.sort()
    return found, folders


def file_digests(root: str, paths: Sequence[str]) -> dict[str, str | None]:
    """``content_hash`` of each file's bytes (the hash of its text when it is UTF-8);
    None for a file gone or unreadable."""
    from echo_core import sha256  # the same digest as hashlib's, without OpenSSL

    found: dict[str, str | None] = {}
    read, close = os.read, os.close
    flags = os.O_RDONLY  # links were vetted by the scan that listed these paths
    for rel in paths:
        try:
            fd = os.open(f"{root}/{rel}", flags)
        except OSError:
            found[rel] = None
            continue
        try:
            digest = sha256()
            while chunk := read(fd, 1 << 20):
                digest.update(chunk)
            found[rel] = digest.hexdigest()[:16]
        except OSError:
            found[rel] = None
        finally:
            close(fd)
    return found


def scan_folder(root: str, rel: str) -> TreeScan:
    """The files directly in folder ``rel`` (not below) and its direct sub-folders with
    their mtimes (the folder itself included); an absent folder gives an empty scan."""
    files: dict[str, tuple[int, int]] = {}
    folders: dict[str, int] = {}
    real_root = Path(os.path.realpath(root))
    where = f"{root}/{rel}" if rel else root
    prefix = f"{rel}/" if rel else ""
    try:
        folders[rel] = os.stat(where).st_mtime_ns
        entries = os.scandir(where)
    except OSError:
        return TreeScan(files, folders={})
    with entries:
        for entry in entries:
            if _hidden(entry.name):
                continue
            try:
                linked = entry.is_symlink()
                st = entry.stat()
            except OSError:
                continue
            path = prefix + entry.name
            if _stat.S_ISDIR(st.st_mode):
                if not linked:
                    folders[path] = st.st_mtime_ns
            elif _stat.S_ISREG(st.st_mode) and (
                    not linked or real_root in Path(os.path.realpath(entry.path)).parents):
                files[path] = (st.st_size, st.st_mtime_ns)
    return TreeScan(files, folders)


def folder_stamps(root: str, folders: Sequence[str]) -> dict[str, int | None]:
    """The ``mtime_ns`` of each folder (``""`` is the root); None for one gone."""
    found: dict[str, int | None] = {}
    for rel in folders:
        try:
            found[rel] = os.stat(f"{root}/{rel}" if rel else root).st_mtime_ns
        except OSError:
            found[rel] = None
    return found


def file_stamps(root: str, paths: Sequence[str]) -> dict[str, tuple[int, int] | None]:
    """``(size, mtime_ns)`` of each file; None for one gone or no longer a file."""
    found: dict[str, tuple[int, int] | None] = {}
    for rel in paths:
        try:
            st = os.stat(f"{root}/{rel}")
        except OSError:
            found[rel] = None
            continue
        found[rel] = (st.st_size, st.st_mtime_ns) if _stat.S_ISREG(st.st_mode) else None
    return found
