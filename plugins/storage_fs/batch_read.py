"""Reading many files of a folder vault at once, one folder descriptor per folder.

``read_by_folder(prefix, rels, read_one)`` reads the clean vault paths ``rels`` (already
validated by ``normalize_path``) and returns their texts (None: no such file). Each
folder is opened once and where the kernel names open files (``/proc/self/fd``) its real
path is checked to lie inside the vault; each file is then opened by name in that folder
with ``O_NOFOLLOW``, so nothing read can lie outside the vault and no per-file path
check (``readlink`` of every file, a path lookup from the root) is needed. That is a
third of the cost of reading a 100k-note vault file by file.

Whatever this fast path cannot settle alone goes to ``read_one(rel)``, the storage's
own single-file read with its full checks and errors: a file that is a symlink, a folder
that is missing, is a link or could not be checked, a name that is not a regular file.
Bytes are turned into text by ``decode(rel, data)`` (the storage's, with its error for
bytes that are not UTF-8).
"""

from __future__ import annotations

import errno
import os
import stat as _stat
from collections.abc import Callable, Sequence

_FD_LINKS = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else ""
#: Only where folders can be opened and checked and files opened by descriptor.
AVAILABLE = bool(_FD_LINKS) and os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = (os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_NOFOLLOW", 0))


def _open_folder(prefix: str, folder: str) -> int | None:
    """A descriptor of the vault folder ``folder`` when it is exactly where its path
    says (no link on the way, inside the vault); None to leave it to ``read_one``."""
    path = f"{prefix}/{folder}" if folder else prefix
    try:
        handle = os.open(path, _DIR_FLAGS)
    except OSError:
        return None
    try:
        if os.readlink(f"{_FD_LINKS}/{handle}") == path:
            return handle
    except OSError:
        pass
    os.close(handle)
    return None


def _read_at(handle: int, name: str) -> bytes | None:
    """The bytes of the regular file ``name`` in the folder ``handle``; None when this
    path cannot settle it (a link, not a regular file, not there)."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=handle)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
            return None
        raise
    try:
        st = os.fstat(fd)
        if not _stat.S_ISREG(st.st_mode):
            return None
        return read_whole(fd, st.st_size)
    finally:
        os.close(fd)


def read_whole(fd: int, size: int) -> bytes:
    """Every byte of the open regular file ``fd`` of ``size`` bytes by ``fstat``: one
    read (a short read of a regular file is its end), more if it grew meanwhile."""
    data = os.read(fd, size + 1)
    if len(data) > size:
        chunks = [data]
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        data = b"".join(chunks)
    return data


def read_by_folder(prefix: str, rels: Sequence[str], read_one: Callable[[str], str | None],
                   decode: Callable[[str, bytes], str]) -> dict[str, str | None]:
    """The texts of ``rels`` keyed by them (module docstring)."""
    by_folder: dict[str, list[str]] = {}
    for rel in rels:
        by_folder.setdefault(rel.rpartition("/")[0], []).append(rel)
    texts: dict[str, str | None] = {}
    for folder, members in by_folder.items():
        handle = _open_folder(prefix, folder)
        if handle is None:
            for rel in members:
                texts[rel] = read_one(rel)
            continue
        try:
            cut = len(folder) + 1 if folder else 0
            for rel in members:
                data = _read_at(handle, rel[cut:])
                texts[rel] = read_one(rel) if data is None else decode(rel, data)
        finally:
            os.close(handle)
    return texts
