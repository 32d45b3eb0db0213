"""Whether a person's editor is saving a note in place right now.

An editor that saves in place truncates the file and writes it again, in one or more
writes; between them the file holds part of the person's text. A write that read the
note then and replaced it (``write_unless_changed``: the file still held what it read)
would rebuild the note from that part, and the rest of the person's save would go to
the replaced file: both texts lost. So before its rename a conditional write waits, at
most ``SAVE_WAIT`` seconds, until the file is open for writing by no process (Linux: a
read lease can be taken on it). Where that cannot be told (no leases: another system, or
a filesystem without them) it waits instead until the file is unchanged for ``QUIET``
seconds (its last write is that old: a save in chunks is over). It says no when the file changed meanwhile or is still being written when the wait
ends: the caller then reads and plans again (``echo_core.edit_retry``), and after its
last attempt exits 1 ("run it again"), nothing written. A note no one is saving (nearly
every write) costs two ``stat`` calls and one lease try, no wait: another process's
write a moment ago (a rename of a whole file) is no save in progress.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["QUIET", "SAVE_WAIT", "Signature", "settled", "signature"]

#: Where leases cannot tell: seconds a file must be left alone before it is replaced.
QUIET = 0.3
#: Longest wait for a save in progress to end, per conditional write.
SAVE_WAIT = 1.0
_POLL = 0.05

try:
    import fcntl

    _LEASE = getattr(fcntl, "F_SETLEASE", None)
except ImportError:  # not a POSIX system
    fcntl = None  # type: ignore[assignment]
    _LEASE = None


def _open_for_writing(real: Path) -> bool | None:
    """Whether some process has ``real`` open for writing; None when it cannot tell
    (no leases here, or not on this filesystem)."""
    if _LEASE is None or fcntl is None:
        return None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        fcntl.fcntl(fd, _LEASE, fcntl.F_RDLCK)
    except OSError as exc:
        return True if exc.errno in (11, 16) else None  # EAGAIN, EBUSY: a writer holds it
    else:
        fcntl.fcntl(fd, _LEASE, fcntl.F_UNLCK)
        return False
    finally:
        os.close(fd)


#: A file's (inode, size, mtime in ns): any write or replacement changes it.
Signature = tuple[int, int, int]


def signature(real: Path) -> Signature | None:
    """``real``'s ``Signature``, None when it is absent or cannot be read."""
    try:
        st = os.stat(real)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def settled(real: Path, *, ours: Signature | None = None, wait: float | None = None) -> bool:
    """True when ``real`` is left alone (module docstring), waiting up to ``wait``
    seconds (default ``SAVE_WAIT``) for that; False when it changed meanwhile or is still
    being saved. An absent file is settled, and so is one still as this process last wrote it (``ours``, its
    signature then: a rename of a whole file, no save in progress)."""
    first = signature(real)
    if first is None or first == ours:
        return True
    deadline = time.monotonic() + (SAVE_WAIT if wait is None else wait)
    while True:
        writing = _open_for_writing(real)
        if writing is False:  # no save in progress: as it was when looked at
            return signature(real) == first
        if writing is None:  # cannot tell: a save is over once the file is quiet
            quiet_for = time.time() - first[2] / 1e9  # ahead of the clock: not a save
            if quiet_for >= QUIET or quiet_for < -QUIET:
                return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL)
        if signature(real) != first:
            return False
