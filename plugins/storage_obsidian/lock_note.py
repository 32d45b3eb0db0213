"""The vault lock of an Obsidian vault: an ADVISORY lock note written through the API.

The Local REST API has no locking and no create-if-absent, so the lock is the hidden note
``_agent/.lock.md`` holding JSON ``{pid, host, created, beat, token}``, taken with
Fischer's timed mutual-exclusion protocol:

1. GET the note. If it is absent or stale, PUT our record over it; else wait and retry.
2. If GET-to-PUT took longer than ``settle / 2`` seconds, our write may have landed after
   someone else's check: withdraw (DELETE our record if still ours) and retry.
3. Sleep ``settle`` seconds, GET again: the lock is ours only if the note still holds our
   token (every contender that saw the lock free wrote within ``settle / 2`` of its look,
   so all those writes land before anyone reads back: the last writer wins, and every
   other writer sees its token replaced).

While the lock is held, a daemon thread refreshes the note every ``stale_after /
REFRESHES`` seconds (a fresh ``beat``; the rest of the record unchanged), so a holder
that runs long keeps its lock and a short ``stale_after`` is safe. A refresh rewrites
the note only when it still holds our token, and stops for good once it is not ours or
once it has not succeeded for ``stale_after / 2`` s (by then another process may judge
the note stale and take it: a late refresh could overwrite that process's record).
Release stops the refresh before it removes the note, so no refresh lands after it.

Stale: the owner is on this host and its pid is gone, the note has not been refreshed for
``stale_after`` seconds (its ``beat``, else its ``created``: a holder that crashed, hangs,
or lives on but failed to remove the note when it released it), it is not a lock record,
or this process wrote it and lost track of it (a request failed mid-protocol). Breaking a
stale lock uses the same
protocol and warns (``StaleLockWarning``). Release deletes the note (permanently) only if
it still holds our token. Within one process the lock is re-entrant per thread and
threads exclude each other (state shared by every storage of the same vault identity).

Honest limits: this is advisory, because the API has no atomic create. It excludes
cooperating echo-memory processes while their look-then-write stays under ``settle / 2``.
A slower one (a stalled network, a suspended laptop) detects it and withdraws, but its
late write may already have replaced the record of a holder that got in meanwhile, and
then a third process can get in too. A holder stalled longer than ``stale_after`` loses
the lock (it is warned at release); ``stale_after`` compares clocks of different hosts
(keep it well above their skew). A holder alive but stuck in its own work keeps
refreshing, as a file lock's holder keeps its lock.
Clients that ignore the note (Obsidian itself, other tools) are not excluded at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import threading
import time
import warnings
from typing import Any, Protocol

from echo_core import (
    BackendUnavailable,
    EchoError,
    ExitCode,
    ProcessRegistry,
    ReentrantHold,
    StaleLockWarning,
    pid_alive,
)

LOCK_PATH = "_agent/.lock.md"
DEFAULT_STALE_AFTER = 60.0
DEFAULT_SETTLE = 0.2
#: A held lock note is refreshed this many times per ``stale_after``.
REFRESHES = 4


class LockNoteIO(Protocol):
    """What the lock needs from the storage: raw access to the lock note."""

    identity: str

    def read_lock_note(self) -> str | None:
        """Text of the lock note, ``None`` when absent."""
        ...

    def write_lock_note(self, text: str) -> None:
        """Create or replace the lock note."""
        ...

    def delete_lock_note(self) -> None:
        """Remove the lock note permanently (no error when absent)."""
        ...


class _Owner:
    """One reading of the lock note."""

    def __init__(self, text: str) -> None:
        owner: dict[str, Any] = {}
        try:
            loaded = json.loads(text)
            if isinstance(loaded, dict):
                owner = loaded
        except ValueError:
            owner = {}
        self.owner = owner

    @property
    def valid(self) -> bool:
        return bool(self.owner.get("token")) and isinstance(self.owner.get("created"), (int, float))

    @property
    def token(self) -> str:
        return str(self.owner.get("token", ""))

    @property
    def pid(self) -> int:
        pid = self.owner.get("pid")
        return pid if isinstance(pid, int) else -1

    @property
    def host(self) -> str:
        return str(self.owner.get("host", "?"))

    def age(self) -> float:
        """Seconds since the holder last refreshed the note (else since it wrote it)."""
        beat = self.owner.get("beat", self.owner.get("created"))
        if not isinstance(beat, (int, float)):
            return 0.0
        return max(0.0, time.time() - float(beat))

    def describe(self) -> str:
        if not self.valid:
            return "an unreadable lock record"
        return f"pid {self.pid} on host {self.host}, last refreshed {self.age():.1f} s ago"


class NoteLock:
    """The process-wide lock state of one vault (see the module docstring)."""

    def __init__(self, identity: str) -> None:
        self.identity = identity
        self._hold = ReentrantHold(f"of {identity}")
        self._written: set[str] = set()  # tokens we wrote and have not yet removed
        self._host = socket.gethostname()
        self._refresh: _Refresh | None = None  # while the lock is held

    def hold(
        self,
        io: LockNoteIO,
        timeout: float = 10.0,
        stale_after: float = DEFAULT_STALE_AFTER,
        settle: float = DEFAULT_SETTLE,
    ) -> contextlib.AbstractContextManager[None]:
        """Hold the vault lock for the ``with`` block; ``EchoError`` 75 after ``timeout``."""
        return self._hold.hold(
            timeout, lambda deadline: self._take(io, deadline, stale_after, settle),
            lambda token: self._give_back(io, token))

    def _take(self, io: LockNoteIO, deadline: float, stale_after: float, settle: float) -> str:
        token = self._acquire(io, deadline, stale_after, settle)
        self._refresh = _Refresh(io, token, stale_after)
        return token

    def _give_back(self, io: LockNoteIO, token: str) -> None:
        refresh, self._refresh = self._refresh, None
        if refresh is not None:
            refresh.stop()  # before the note goes: no refresh lands after the release
        self._release(io, token)

    def _record(self, token: str) -> str:
        now = time.time()
        record = {"pid": os.getpid(), "host": self._host, "created": now, "beat": now,
                  "token": token}
        return json.dumps(record) + "\n"

    def _stale_reason(self, seen: _Owner, stale_after: float) -> str | None:
        if not seen.valid:
            return "it is not a lock record"
        if seen.token in self._written:
            return "this process left it behind after a failed request"
        if seen.host == self._host and not pid_alive(seen.pid):
            return "its owner is no longer running"
        if seen.age() > stale_after:
            return f"it is older than {stale_after:g} s: its holder stopped refreshing it"
        return None

    def _acquire(self, io: LockNoteIO, deadline: float, stale_after: float, settle: float) -> str:
        token = secrets.token_hex(16)
        delay, grace = 0.01, 3
        while True:
            outcome, seen = self._attempt(io, token, stale_after, settle)
            if outcome == "taken":
                return token
            if outcome == "slow" and grace > 0 and time.monotonic() >= deadline:
                grace -= 1  # the lock looked free: try again rather than call it held
                continue
            remaining = deadline - time.monotonic()
            if remaining > 0:
                time.sleep(min(delay, remaining))
                delay = min(delay * 2, 0.1)
                continue
            if outcome == "slow":
                raise EchoError(
                    f"could not take the free vault lock note {LOCK_PATH} of {self.identity}: "
                    f"each look-then-write took longer than lock_settle / 2 ({settle / 2:g} s), "
                    "too slow to be safe; retry, or raise the lock_settle option",
                    ExitCode.LOCK_HELD,
                )
            owner = "another process" if seen is None else seen.describe()
            raise EchoError(
                f"vault lock note {LOCK_PATH} of {self.identity} is held by {owner}; wait "
                "for that process to finish and retry. A running holder refreshes the note "
                f"every {stale_after / REFRESHES:g} s; once it has not for {stale_after:g} s "
                f"(the holder is gone or stuck) it is broken automatically, or delete the "
                f"note {LOCK_PATH} in the vault by hand",
                ExitCode.LOCK_HELD,
            )

    def _attempt(
        self, io: LockNoteIO, token: str, stale_after: float, settle: float
    ) -> tuple[str, _Owner | None]:
        """One round of the protocol: ``(outcome, owner last seen)``; outcome is
        ``taken``, ``held`` (a live owner), ``lost`` (another writer won) or ``slow``."""
        looked = time.monotonic()
        text = io.read_lock_note()
        seen = None if text is None else _Owner(text)
        reason = None if seen is None else self._stale_reason(seen, stale_after)
        if seen is not None and reason is None:
            return "held", seen
        self._written.add(token)
        io.write_lock_note(self._record(token))
        if seen is not None:  # the stale record is gone now, whoever wins
            warnings.warn(
                f"broke stale vault lock note {LOCK_PATH} of {self.identity} held by "
                f"{seen.describe()} ({reason})",
                StaleLockWarning,
                stacklevel=5,
            )
        try:
            if time.monotonic() - looked > settle / 2:
                self._withdraw(io, token)  # our write may have landed after another's look
                return "slow", None
            time.sleep(settle)
            now = io.read_lock_note()
        except BaseException:
            with contextlib.suppress(Exception):
                self._withdraw(io, token)  # best effort; else _written marks it ours
            raise
        if now is not None and _Owner(now).token == token:
            return "taken", None
        return "lost", None if now is None else _Owner(now)

    def _withdraw(self, io: LockNoteIO, token: str) -> None:
        now = io.read_lock_note()
        if now is not None and _Owner(now).token == token:
            io.delete_lock_note()
        self._written.discard(token)

    def _release(self, io: LockNoteIO, token: str) -> None:
        try:
            now = io.read_lock_note()
            if now is not None and _Owner(now).token == token:
                io.delete_lock_note()
                self._written.discard(token)
                return
        except (BackendUnavailable, EchoError) as exc:
            warnings.warn(
                f"could not remove the vault lock note {LOCK_PATH} of {self.identity} "
                f"({exc}); it is broken automatically once stale",
                StaleLockWarning,
                stacklevel=4,
            )
            return
        self._written.discard(token)  # the note is not ours any more
        owner = "nobody" if now is None else _Owner(now).describe()
        warnings.warn(
            f"vault lock note {LOCK_PATH} of {self.identity} was taken from this process "
            f"while held (now: {owner}); another process judged it stale - raise "
            "stale_after if operations run long",
            StaleLockWarning,
            stacklevel=4,
        )


class _Refresh:
    """The daemon thread refreshing a held lock note (see the module docstring)."""

    def __init__(self, io: LockNoteIO, token: str, stale_after: float) -> None:
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(io, token, stale_after), daemon=True,
            name=f"lock note refresh of {io.identity}",
        )
        self._thread.start()

    def _run(self, io: LockNoteIO, token: str, stale_after: float) -> None:
        refreshed = time.monotonic()
        while not self._stopped.wait(stale_after / REFRESHES):
            if time.monotonic() - refreshed > stale_after / 2:
                return  # others may judge it stale by now: never write over their record
            try:
                text = io.read_lock_note()
                seen = None if text is None else _Owner(text)
                if seen is None or seen.token != token or self._stopped.is_set():
                    return  # removed, taken over (warned at release), or released
                io.write_lock_note(json.dumps({**seen.owner, "beat": time.time()}) + "\n")
                refreshed = time.monotonic()
            except EchoError:  # unreachable (BackendUnavailable) for now: the next period retries
                continue

    def stop(self) -> None:
        """Stop refreshing; returns once no refresh is under way."""
        self._stopped.set()
        self._thread.join()


_REGISTRY: ProcessRegistry[NoteLock] = ProcessRegistry()


def note_lock_for(identity: str) -> NoteLock:
    """The process-wide ``NoteLock`` of the vault ``identity`` (shared by its storages)."""
    return _REGISTRY.get(identity, lambda: NoteLock(identity))
