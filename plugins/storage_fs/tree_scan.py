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


def _hidden(name: str) -> bool:
    return name.startswith(".")


def scan_tree(root: str, rel: str = "") -> TreeScan:
    """Files and folders under ``rel`` of the vault at ``root`` (an absolute path string);
    an absent folder gives an empty scan."""
    files: dict[str, tuple[int, int]] = {}
    folders: dict[str, int] = {}
    real_root = Path(os.path.realpath(root))
    skip = len(root) + 1
    start = f"{root}/{rel}" if rel else root
    try:
        folders[rel] = os.stat(start).st_mtime_ns
    except OSError:
        return TreeScan(files, folders={})
    stack = [start]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                if _hidden(entry.name):
                    continue
                try:
                    linked = entry.is_symlink()
                    st = entry.stat()
                except OSError:
                    continue
                path = entry.path[skip:].replace(os.sep, "/")
                if _stat.S_ISDIR(st.st_mode):
                    if not linked:
                        folders[path] = st.st_mtime_ns
                        stack.append(entry.path)
                    continue
                if not _stat.S_ISREG(st.st_mode):
                    continue
                if linked and real_root not in Path(os.path.realpath(entry.path)).parents:
                    continue
                files[path] = (st.st_size, st.st_mtime_ns)
    return TreeScan(files, folders)


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
