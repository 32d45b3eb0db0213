"""``NoteChangeLog``: which notes other processes changed, for in-memory rankers.

A plain (in-memory) ranker is built per process, so a long-running process (the MCP
server) would not see notes another process (a CLI capture from a hook) writes. Every
process whose active ranker is plain appends the path of each note it writes or deletes
to ``<state_dir>/recall/notes-changed.log`` (one ``write`` of one line, ``O_APPEND``);
before a search, a process reads the lines added since its mark and re-indexes those
notes from the vault. Over ``MAX_BYTES`` the log is replaced by an empty file (a new
inode); a reader whose mark names the old inode rebuilds from the whole corpus.

A persistent ranker never uses it: its files are shared by every process already.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import attrs

#: The log's file name inside the ranker folder.
FILE_NAME = "notes-changed.log"
#: Above this size the next append starts a new log (readers then rebuild).
MAX_BYTES = 1 << 20


@attrs.frozen
class LogMark:
    """How far a reader has read: the log file's inode (0: no log yet) and byte offset."""

    inode: int = 0
    offset: int = 0


class NoteChangeLog:
    """The append-only log of changed note paths in one ranker folder."""

    def __init__(self, folder: str | os.PathLike[str], max_bytes: int | None = None) -> None:
        self.path = Path(folder) / FILE_NAME
        self.max_bytes = MAX_BYTES if max_bytes is None else max_bytes

    def mark(self) -> LogMark:
        """The end of the log now (read from here on to see later changes only)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return LogMark()
        return LogMark(st.st_ino, st.st_size)

    def append(self, path: str) -> None:
        """Record that the note at ``path`` changed (OSError propagates)."""
        with contextlib.suppress(FileNotFoundError):
            if os.stat(self.path).st_size > self.max_bytes:
                fresh = self.path.with_name(f"{FILE_NAME}.{os.getpid()}.new")
                fresh.write_bytes(b"")
                os.replace(fresh, self.path)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, path.encode("utf-8") + b"\n")
        finally:
            os.close(fd)

    def read_since(self, mark: LogMark) -> tuple[list[str] | None, LogMark]:
        """Paths appended since ``mark`` (complete lines only, duplicates kept once, in
        order) and the new mark; ``None`` when the log was replaced since ``mark`` (the
        reader must rebuild from the corpus)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return ([] if mark.inode == 0 else None), LogMark()
        try:
            inode = os.fstat(fd).st_ino
            if mark.inode not in (0, inode):
                return None, self._end(fd, inode)
            start = mark.offset if mark.inode == inode else 0
            os.lseek(fd, start, os.SEEK_SET)
            data = b""
            while chunk := os.read(fd, 1 << 16):
                data += chunk
        finally:
            os.close(fd)
        complete = data[: data.rfind(b"\n") + 1]
        lines = complete.decode("utf-8", errors="replace").splitlines()
        return list(dict.fromkeys(line for line in lines if line)), LogMark(
            inode, start + len(complete))

    @staticmethod
    def _end(fd: int, inode: int) -> LogMark:
        return LogMark(inode, os.fstat(fd).st_size)
