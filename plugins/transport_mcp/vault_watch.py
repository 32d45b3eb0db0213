"""Live freshness for a running ``serve``: watch a folder vault and apply every change to
both indexes (SPEC §5.1).

``VaultWatcher`` runs ``watchfiles`` (inotify / FSEvents / ReadDirectoryChangesW through
the Rust ``notify`` crate; polling where the platform has none, or when asked) in one
background thread. Changes arrive in batches (``watchfiles`` waits ``STEP_MS`` of quiet,
at most ``DEBOUNCE_MS``); each batch is reduced to vault-relative paths by
``batch_of`` and handed to ``apply`` (the server passes ``NoteSync.apply``, which calls
``sync_changed`` on the watcher thread's own context). What is never looked at: hidden
files and folders (``.obsidian``, ``.git``, ``.trash``, editors' ``.#x`` locks, the
atomic writes' ``.x.tmp`` files), temp files (``~``, ``.swp``, ``.tmp``, ``.part``) and the
entity index (``_agent/index/``, the indexes' own files).

Failure contract: ``apply`` raising is logged and the watcher goes on; the watcher itself
failing (the folder gone, too many watches) is logged and it starts again after a
back-off (``first_backoff_s``, 1 s, doubling to ``MAX_BACKOFF_S``), then calls ``on_resume`` (the server runs a
fast sweep there: changes made while it was down are caught up). Nothing here raises into
the server. ``stop()`` ends the thread within about ``STEP_MS`` (the stop event is checked
by ``watchfiles`` every step).

``ECHO_WATCH`` picks the mode: ``auto`` (default: native events, ``watchfiles``' own
polling fallback), ``poll`` (force polling every ``POLL_MS``: network drives, containers
without inotify) or ``off``. ``watchfiles`` is imported only when the watcher starts.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

import attrs

from echo_core import usage_error
from plugins.transport_mcp.background import BackgroundThread

log = logging.getLogger("echo_memory.mcp")
WATCH_ENV = "ECHO_WATCH"
WATCH_MODES = ("auto", "poll", "off")
DEBOUNCE_MS = 500
STEP_MS = 50
POLL_MS = 300
READY_TIMEOUT_MS = 200  # the first (empty) yield tells that the watches are in place
MAX_BACKOFF_S = 60.0
INDEX_FOLDER = "_agent/index/"
TEMP_SUFFIXES = ("~", ".tmp", ".swp", ".swx", ".part", ".crdownload")


def watch_mode(env: Mapping[str, str]) -> str:
    """``ECHO_WATCH``: ``auto`` (default), ``poll`` or ``off``; anything else is 2."""
    raw = env.get(WATCH_ENV, "").strip().lower() or "auto"
    if raw not in WATCH_MODES:
        raise usage_error(f"{WATCH_ENV}={raw!r}: use one of {', '.join(WATCH_MODES)}")
    return raw


def folder_root(identity: str) -> Path | None:
    """The folder of a folder vault's storage ``identity`` (``file:<root>``), else None."""
    if not identity.startswith("file:"):
        return None
    return Path(identity[len("file:"):])


def ignored(rel: str) -> bool:
    """True for a vault-relative path the watcher never looks at (see module docstring)."""
    parts = PurePosixPath(rel).parts
    if not parts or any(part.startswith(".") for part in parts):
        return True
    return (rel + "/").startswith(INDEX_FOLDER) or rel.endswith(TEMP_SUFFIXES)


@attrs.frozen
class WatchBatch:
    """One batch of changes: ``notes`` (``.md`` paths added, changed or gone) and
    ``folders`` (folders added or gone: a folder moved in or out brings or takes every
    note in it, and the events name only the folder). Vault-relative, sorted."""

    notes: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.notes or self.folders)


def batch_of(root: Path, changes: Iterable[tuple[Any, str]]) -> WatchBatch:
    """The ``WatchBatch`` of ``watchfiles`` changes ``(Change, absolute path)`` under
    ``root``: paths outside it and ignored ones dropped; a path that is not ``.md`` counts
    as a folder when it is one now, or when it is gone (a deleted file that was not a note
    matches no indexed path, so treating it as a folder costs nothing)."""
    notes: set[str] = set()
    folders: set[str] = set()
    for _change, raw in changes:
        path = Path(raw)
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            continue
        if rel == "." or ignored(rel):
            continue
        if rel.endswith(".md"):
            notes.add(rel)
        elif path.is_dir() or not path.exists():
            folders.add(rel)
    return WatchBatch(tuple(sorted(notes)), tuple(sorted(folders)))


def _keep(_change: Any, raw: str) -> bool:
    """``watchfiles`` filter: drop hidden and temp files early (the rest in ``batch_of``)."""
    name = raw.replace("\\", "/").rsplit("/", 1)[-1]
    return not (name.startswith(".") or name.endswith(TEMP_SUFFIXES))


class VaultWatcher(BackgroundThread):
    """Watches ``root`` in a daemon thread and calls ``apply(batch)`` for each batch of
    changes (see module docstring). ``ready`` is set once the watches are in place;
    ``batches`` counts the batches handed to ``apply``; ``stop()`` ends it."""

    thread_name = "echo-vault-watch"

    def __init__(self, root: Path, apply: Callable[[WatchBatch], None], *,
                 polling: bool = False, on_resume: Callable[[], None] | None = None,
                 debounce_ms: int = DEBOUNCE_MS, poll_ms: int = POLL_MS,
                 first_backoff_s: float = 1.0) -> None:
        super().__init__()
        self.root = root
        self.polling = polling
        self.ready = threading.Event()
        self.batches = 0
        self.restarts = 0
        self._apply = apply
        self._on_resume = on_resume
        self._debounce_ms = debounce_ms
        self._poll_ms = poll_ms
        self._first_backoff = first_backoff_s

    @property
    def how(self) -> str:
        """How changes are seen: ``polling every N ms`` or ``file system events``."""
        return f"polling every {self._poll_ms} ms" if self.polling else "file system events"

    def run(self) -> None:
        """The watcher thread: watch, and start again after a failure (module docstring)."""
        backoff = self._first_backoff
        while not self.stopping.is_set():
            try:
                self._watch()
            except Exception as exc:  # noqa: BLE001 - the watcher never takes the server down
                if self.ready.is_set():  # it had been watching: start the back-off afresh
                    backoff = self._first_backoff
                self.ready.clear()
                log.warning("vault watch: stopped (%s: %s); starting again in %.0f s",
                            type(exc).__name__, exc, backoff)
                if self.stopping.wait(backoff):
                    return
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                self.restarts += 1
            else:
                return  # the stop event ended it

    def _watch(self) -> None:
        from watchfiles import watch

        if not self.root.is_dir():
            raise FileNotFoundError(f"vault folder {self.root} is not there")
        resumed = self.restarts > 0
        for changes in watch(self.root, watch_filter=_keep, debounce=self._debounce_ms,
                             step=STEP_MS, stop_event=self.stopping, rust_timeout=READY_TIMEOUT_MS,
                             yield_on_timeout=True, raise_interrupt=False,
                             force_polling=self.polling, poll_delay_ms=self._poll_ms,
                             ignore_permission_denied=True):
            if not self.ready.is_set():
                self.ready.set()
                log.info("vault watch: watching %s (%s)", self.root, self.how)
                if resumed and self._on_resume is not None:
                    self._guarded("catch-up after a restart", self._on_resume)
            if changes:
                batch = batch_of(self.root, changes)
                if batch:
                    self.batches += 1
                    self._guarded("applying changes", functools.partial(self._apply, batch))

    @staticmethod
    def _guarded(what: str, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception as exc:
            log.warning("vault watch: %s failed (%s: %s)", what, type(exc).__name__, exc,
                        exc_info=exc)


class Watching(Protocol):
    """What ``LiveFlag`` looks at: ``ready`` is set while changes are being applied live
    (a ``VaultWatcher``, or a ``change_follow.ChangeFollower``)."""

    ready: threading.Event


class LiveFlag:
    """``ctx.live_watched`` of the server's contexts: true while ``watcher`` (set once it
    starts) watches, so the per-call freshness check (``echo_core``'s ``freshen_for``) is
    skipped then, and runs again while the watcher is down or restarting."""

    def __init__(self) -> None:
        self.watcher: Watching | None = None

    def __bool__(self) -> bool:
        return self.watcher is not None and self.watcher.ready.is_set()


def wait_ready(watcher: VaultWatcher, timeout: float) -> bool:
    """Wait until ``watcher`` watches (or ``timeout`` seconds); True when it does."""
    deadline = time.monotonic() + timeout
    while not watcher.ready.wait(0.05):
        if time.monotonic() > deadline or not watcher.alive:
            return watcher.ready.is_set()
    return True
