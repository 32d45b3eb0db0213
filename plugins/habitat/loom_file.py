"""The loom's one write primitive: append whole lines to a day file, durably.

Standard library only and free of the package's other modules: the hook recorder
(``hook_record``) runs it in a bare interpreter (``python -S``) copied beside it in the
built Claude Code plugin, and ``loom.Loom`` and the group committer use the same code.

``append_lines(path, data)``: under an exclusive ``flock`` of the file, ``data`` (whole
``\\n``-terminated lines) is written with one ``write`` loop and ``fsync``-ed before the
call returns. A writer killed mid-write can leave a torn tail (bytes after the last
``\\n``): never acknowledged, so the next append cuts it off (``ftruncate`` back to the
last ``\\n``) before writing. Every line the file keeps is therefore whole: nothing an
append acknowledged is ever changed, and nothing torn is ever joined to a later line.
"""

from __future__ import annotations

import fcntl
import os

__all__ = ["append_lines", "torn_tail_start"]

_SCAN = 65536


def torn_tail_start(fd: int, size: int) -> int:
    """Where the file's torn tail starts: the offset just after its last ``\\n`` (0 when
    it has none); ``size`` when the file ends with ``\\n`` (no torn tail)."""
    end = size
    while end > 0:
        start = max(0, end - _SCAN)
        chunk = os.pread(fd, end - start, start)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        end = start
    return 0


def append_lines(path: str | os.PathLike[str], data: bytes) -> None:
    """Append ``data`` (whole lines) to ``path`` under its lock, after cutting a torn tail;
    ``fsync`` before returning. Creates the file (mode 600), not its folder. Raises
    ``OSError`` (the disk's error, e.g. full) after cutting what it wrote of ``data``:
    nothing of it is acknowledged, and nothing of it stays for a retry to double."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            size = torn_tail_start(fd, size)  # a writer died mid-line
            os.ftruncate(fd, size)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, size)  # a failed append leaves nothing behind
            except OSError:
                pass  # the next append cuts the torn tail
            raise
    finally:
        os.close(fd)  # closing releases the lock
