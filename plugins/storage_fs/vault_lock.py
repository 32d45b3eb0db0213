"""The cross-process vault lock of a folder vault (SPEC §1.4).

The lock is the file ``<root>/_agent/.lock`` holding JSON ``{pid, host, created, token}``.
It is created by writing the owner record to a temp file and hard-linking it into place
(``os.link`` fails when the lock exists), so the record is complete whenever the lock is
visible. A lock whose owner is gone (same host, pid not alive) or that is older than
``stale_after`` seconds is *stale*: it is broken with a ``StaleLockWarning`` naming the
dead owner. Breakers serialise on ``fcntl.flock`` of ``<root>/_agent/.lock.break`` and
re-check that the lock still holds the same stale record before removing it. The break
file is removed again by its holder before the flock is released (nothing is left in the
synced vault); a breaker that waited on a file already removed sees that the name now
leads to another file (or none) and starts over on the current one, so at most one
breaker is ever past the guard (``_break_guard``).

Within one process the lock is re-entrant per thread (a depth counter) and threads
exclude each other; every ``VaultLock`` of the same lock file in a process shares that
state (see ``vault_lock_for``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from echo_core import (
    NOT_WRITABLE_ERRNOS,
    EchoError,
    ExitCode,
    ProcessRegistry,
    ReentrantHold,
    StaleLockWarning,
    VaultMissing,
    VaultNotWritable,
    pid_alive,
    sweep_stale,
    temp_name,
)

LOCK_DIR = "_agent"
LOCK_NAME = ".lock"
BREAK_NAME = ".lock.break"
DEFAULT_STALE_AFTER = 600.0


class _Observed:
    """One reading of the lock file: raw bytes, file identity and the parsed owner."""

    def __init__(self, raw: bytes, ino: int, mtime: float) -> None:
        self.raw = raw
        self.ino = ino
        self.mtime = mtime
        owner: dict[str, Any] = {}
        try:
            loaded = json.loads(raw.decode("utf-8"))
            if isinstance(loaded, dict):
                owner = loaded
        except (UnicodeDecodeError, ValueError):
            owner = {}
        self.owner = owner

    @property
    def pid(self) -> int:
        pid = self.owner.get("pid")
        return pid if isinstance(pid, int) else -1

    @property
    def host(self) -> str:
        return str(self.owner.get("host", "?"))

    @property
    def token(self) -> str:
        return str(self.owner.get("token", ""))

    @property
    def created(self) -> float:
        created = self.owner.get("created")
        return float(created) if isinstance(created, (int, float)) else self.mtime

    def age(self) -> float:
        return max(0.0, time.time() - self.created)

    def describe(self) -> str:
        return f"pid {self.pid} on host {self.host}, {self.age():.1f} s old"

    def same_as(self, other: _Observed) -> bool:
        return (self.raw, self.ino, self.mtime) == (other.raw, other.ino, other.mtime)


class VaultLock:
    """Exclusive lock of one vault across processes; re-entrant within a thread.

    ``hold(timeout)`` is a context manager: it waits up to ``timeout`` seconds, breaking a
    stale lock on the way, and raises ``EchoError`` (75, ``LOCK_HELD``) naming the owner
    when the lock stays held. Release removes the lock file only if it still holds our
    token (a lock broken by someone else as stale is left alone, with a warning).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.lock_dir = root / LOCK_DIR
        self.path = self.lock_dir / LOCK_NAME
        self._hold = ReentrantHold(str(self.path))
        self._host = os.uname().nodename  # socket.gethostname(), without socket

    def hold(
        self, timeout: float = 10.0, stale_after: float = DEFAULT_STALE_AFTER
    ) -> contextlib.AbstractContextManager[None]:
        """Hold the lock for the duration of the ``with`` block (see class docstring)."""
        return self._hold.hold(timeout, lambda deadline: self._acquire_file(deadline, stale_after),
                               self._release_file)

    # --- the lock file ----------------------------------------------------------------

    def _acquire_file(self, deadline: float, stale_after: float) -> str:
        if not self.root.is_dir():
            raise VaultMissing(
                f"vault folder {self.root} does not exist (a drive not mounted, or a wrong "
                "vault path?)"
            )
        token = os.urandom(16).hex()
        delay = 0.005
        while True:
            if self._try_create_checked(token):
                sweep_stale(self.lock_dir)  # lock temps of writers killed mid-acquire
                if os.path.lexists(self.lock_dir / BREAK_NAME):
                    _remove_break_file(self.lock_dir / BREAK_NAME)
                return token
            seen = self._observe()
            if seen is None:
                continue  # released between our attempt and our look: try again now
            reason = self._stale_reason(seen, stale_after)
            if reason is not None:
                self._break(seen, reason)
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise EchoError(
                    f"vault lock {self.path} is held by {seen.describe()}; wait for that "
                    f"process to finish and retry. If it is gone, the lock is broken "
                    f"automatically once it is {stale_after:.0f} s old, or delete "
                    f"{self.path} by hand",
                    ExitCode.LOCK_HELD,
                )
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, 0.05)

    def _try_create_checked(self, token: str) -> bool:
        """``_try_create``, with a vault that takes no writes (full, read-only, denied)
        reported as ``VaultNotWritable`` rather than a raw ``OSError``."""
        try:
            self.lock_dir.mkdir(exist_ok=True)
            return self._try_create(token)
        except OSError as exc:
            if exc.errno in NOT_WRITABLE_ERRNOS:
                raise VaultNotWritable(
                    f"vault folder {self.root} cannot be written ({exc.strerror or exc} "
                    "taking the vault lock); free space or fix its permissions") from None
            raise

    def _try_create(self, token: str) -> bool:
        """Create the lock file atomically with a complete owner record; False if held."""
        record = {
            "pid": os.getpid(),
            "host": self._host,
            "created": time.time(),
            "token": token,
        }
        data = json.dumps(record).encode("utf-8")
        tmp = self.lock_dir / temp_name(LOCK_NAME)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, self.path)
                return True
            except FileExistsError:
                return False
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                    raise
                return self._create_exclusive(data)  # filesystem without hard links
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def _create_exclusive(self, data: bytes) -> bool:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        return True

    def _observe(self) -> _Observed | None:
        try:
            with open(self.path, "rb") as handle:
                st = os.fstat(handle.fileno())
                raw = handle.read()
        except FileNotFoundError:
            return None
        return _Observed(raw, st.st_ino, st.st_mtime)

    def _stale_reason(self, seen: _Observed, stale_after: float) -> str | None:
        if seen.owner and seen.host == self._host and not pid_alive(seen.pid):
            return "its owner is no longer running"
        if seen.age() > stale_after:
            return f"it is older than {stale_after:.0f} s"
        return None

    def _break(self, seen: _Observed, reason: str) -> None:
        """Remove the stale lock ``seen`` unless another process already replaced it."""
        with _break_guard(self.lock_dir / BREAK_NAME, wait=True):
            now = self._observe()
            if now is None or not now.same_as(seen):
                return  # somebody else broke (and maybe re-took) it meanwhile
            os.unlink(self.path)
        warnings.warn(
            f"broke stale vault lock {self.path} held by {seen.describe()} ({reason})",
            StaleLockWarning,
            stacklevel=2,
        )

    def _release_file(self, token: str) -> None:
        seen = self._observe()
        if seen is not None and seen.token == token:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            return
        owner = "nobody" if seen is None else seen.describe()
        warnings.warn(
            f"vault lock {self.path} was taken from this process while held (now: {owner}); "
            "another process judged it stale - raise stale_after if operations run long",
            StaleLockWarning,
            stacklevel=2,
        )


@contextlib.contextmanager
def _break_guard(path: Path, *, wait: bool) -> Iterator[bool]:
    """Hold the ``flock`` of ``path`` (created if missing) for the ``with`` block and
    remove ``path`` before releasing it. Yields True when held; with ``wait=False``,
    False at once when another process holds it.

    A waiter may get the flock of a file its previous holder has just removed, while a
    newcomer creates and locks a new one: the guard is held only once the name still
    leads to the file we locked (same device and inode - an inode kept open is never
    reused), else it starts over. The name is removed only by the holder of the file it
    leads to, so at most one process is ever inside the guard."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            mine = os.fstat(fd)
            try:
                named = os.stat(path)
            except FileNotFoundError:
                continue  # removed by the previous holder while we waited
            if (named.st_dev, named.st_ino) != (mine.st_dev, mine.st_ino):
                continue  # the name leads to a newer break file: lock that one
            try:
                yield True
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
            return
        finally:
            os.close(fd)  # closing releases the flock


def _remove_break_file(path: Path) -> None:
    """Remove a break file left by a breaker that was killed (or by an older version
    that kept it), unless a breaker holds it right now (it removes it itself)."""
    with contextlib.suppress(OSError), _break_guard(path, wait=False):
        pass


_REGISTRY: ProcessRegistry[VaultLock] = ProcessRegistry()


def vault_lock_for(root: Path) -> VaultLock:
    """The process-wide ``VaultLock`` of ``root`` (shared by every storage of that vault)."""
    return _REGISTRY.get(str(root), lambda: VaultLock(root))
