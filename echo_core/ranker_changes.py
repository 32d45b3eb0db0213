"""``NoteChangeLog``: which notes other processes changed, for in-memory rankers.

A plain (in-memory) ranker is built per process, so a long-running process (the MCP
server) would not see notes another process (a CLI capture from a hook) writes. Every
process whose active ranker is plain appends the path of each note it writes or deletes
to ``<state_dir>/recall/notes-changed.log`` (one ``write`` of one line, ``O_APPEND``);
before a search, a process reads the lines added since its mark and re-indexes those
notes from the vault. Over ``MAX_BYTES`` the log is replaced by a fresh one; a reader
whose mark names the old log rebuilds from the whole corpus. Each log starts with a
header line holding a random token, and a mark names the log by inode *and* token: a
filesystem reuses a freed inode number for the next new file, so the inode alone once
made a reader take a replaced log for the one it had read.

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
#: The first line of every log: this prefix, then the log's random token.
HEADER = b"#echo-memory notes-changed "


@attrs.frozen
class LogMark:
    """How far a reader has read: the log (its inode, 0 for no log yet, and its header's
    token) and the byte offset."""

    inode: int = 0
    offset: int = 0
    token: str = ""


class NoteChangeLog:
    """The append-only log of changed note paths in one ranker folder."""

    def __init__(self, folder: str | os.PathLike[str], max_bytes: int | None = None) -> None:
        self.path = Path(folder) / FILE_NAME
        self.max_bytes = MAX_BYTES if max_bytes is None else max_bytes

    def mark(self) -> LogMark:
        """The end of the log now (read from here on to see later changes only)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return LogMark()
        try:
            return self._end(fd)
        finally:
            os.close(fd)

    def append(self, path: str) -> None:
        """Record that the note at ``path`` changed (OSError propagates)."""
        try:
            size: int | None = os.stat(self.path).st_size
        except FileNotFoundError:
            size = None
        if size is None or size > self.max_bytes:
            self._start_log(replace=size is not None)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, path.encode("utf-8") + b"\n")
        finally:
            os.close(fd)

    def _start_log(self, *, replace: bool) -> None:
        """Put a fresh log (its header only) in place: replacing the full one, or where
        there is none (``link`` fails when another process made one first: kept)."""
        fresh = self.path.with_name(f"{FILE_NAME}.{os.getpid()}.{os.urandom(4).hex()}.new")
        fresh.write_bytes(HEADER + os.urandom(8).hex().encode("ascii") + b"\n")
        try:
            if replace:
                os.replace(fresh, self.path)
            else:
                with contextlib.suppress(FileExistsError):
                    os.link(fresh, self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(fresh)

    def read_since(self, mark: LogMark) -> tuple[list[str] | None, LogMark]:
        """Paths appended since ``mark`` (complete lines only, duplicates kept once, in
        order) and the new mark; ``None`` when the log was replaced since ``mark`` (the
        reader must rebuild from the corpus)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return ([] if mark.inode == 0 else None), LogMark()
        try:
            inode, token = os.fstat(fd).st_ino, _token(fd)
            if mark.inode != 0 and (mark.inode, mark.token) != (inode, token):
                return None, self._end(fd)
            start = mark.offset if mark.inode else 0
            os.lseek(fd, start, os.SEEK_SET)
            data = b""
            while chunk := os.read(fd, 1 << 16):
                data += chunk
        finally:
            os.close(fd)
        complete = data[: data.rfind(b"\n") + 1]
        lines = complete.decode("utf-8", errors="replace").splitlines()
        if start == 0 and lines and lines[0].encode("utf-8").startswith(HEADER):
            lines = lines[1:]
        return list(dict.fromkeys(line for line in lines if line)), LogMark(
            inode, start + len(complete), token)

    @staticmethod
    def _end(fd: int) -> LogMark:
        return LogMark(os.fstat(fd).st_ino, os.fstat(fd).st_size, _token(fd))


def _token(fd: int) -> str:
    """The token in the header of the log open at ``fd`` ("" for a log without one)."""
    head = os.pread(fd, len(HEADER) + 64, 0).split(b"\n", 1)[0]
    return head[len(HEADER):].decode("ascii", errors="replace") if head.startswith(HEADER) else ""
