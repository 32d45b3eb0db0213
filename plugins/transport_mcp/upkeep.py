"""What a running ``serve`` does besides answering calls: watch the vault and run the
scheduled jobs (SPEC §5.1 live freshness; issue 14).

``start_upkeep(runner, host, env)`` starts, after the warm-up:

* the vault watcher (``vault_watch``) for a folder vault (storage identity ``file:...``),
  unless ``ECHO_WATCH=off``; each batch goes to ``NoteSync.apply``, which calls
  ``sync_changed`` (both indexes made to agree with the notes as they are now, and the
  vault manifest told, so no later check reads them again) on the
  watcher thread's own context. A shared vault with a change log (PostgreSQL) is
  followed instead (``change_follow``: LISTEN, then a catch-up by change number after
  each notification; the outbox replayed on every (re)connection), unless
  ``ECHO_WATCH=off``. Another backend is not watched: that is logged once, and live
  freshness then rests on the fast sweep job.
* the job scheduler (``jobs``): ``fast-sweep`` (``fast_sweep(ctx)``) every
  ``ECHO_SERVE_SWEEP_MINUTES`` (default 60; 0 turns it off), its first run right after
  start (edits made while the server was down); ``decay`` every
  ``ECHO_SERVE_DECAY_HOURS`` (default 24) when an operation named ``decay`` is
  registered, else a log line says it is not scheduled.
* ``sweep_temp_files``: the temp files that writers killed mid-write left in a folder
  vault's ``_agent/.tmp`` are removed by the warm-up (``serving.warm_up``) and by every
  fast sweep job (``tempfiles.sweep_stale``: a dead process's on this host, any over an
  hour old; never a live writer's). The storage sweeps there only when it writes, so a
  server that came up after a kill and only answered reads kept them.

While the watcher watches (or the follower follows), the server's contexts skip the per-call freshness check
(``LiveFlag`` as their ``live_watched``): the watcher already applies what it would find.
A watcher batch and a job never run at once (one lock): a sweep that rebuilds an index
from its own listing cannot undo a change the watcher synced meanwhile.
Threads get their contexts from ``runner.context()`` (one per thread, built on first
use), so nothing is shared with the threads that serve calls. ``ServerUpkeep.close()``
stops both and waits for their threads. Nothing here raises into the server once
started: a bad setting is refused (``EchoError`` 2) before anything starts.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from echo_core import (
    EchoContext,
    EchoError,
    PluginHost,
    sweep_stale,
    sync_changed,
    usage_error,
)
from plugins.transport_mcp.change_follow import ChangeFollower, can_follow
from plugins.transport_mcp.jobs import Job, JobScheduler
from plugins.transport_mcp.vault_watch import (
    LiveFlag,
    VaultWatcher,
    WatchBatch,
    folder_root,
    watch_mode,
)

log = logging.getLogger("echo_memory.mcp")
SWEEP_MINUTES_ENV = "ECHO_SERVE_SWEEP_MINUTES"
DECAY_HOURS_ENV = "ECHO_SERVE_DECAY_HOURS"
DEFAULT_SWEEP_MINUTES = 60.0
DEFAULT_DECAY_HOURS = 24.0
DECAY_OPERATION = "decay"
#: Where a folder vault's atomic writes stage their temp files (the storage's own folder).
VAULT_TEMP_DIR = "_agent/.tmp"

ContextOf = Callable[[], EchoContext]


class NoteSync:
    """Applies a ``WatchBatch`` to both indexes through ``sync_changed`` (on ``context()``,
    the calling thread's own) and logs one line per batch."""

    def __init__(self, context: ContextOf, serial: threading.Lock | None = None) -> None:
        self._context = context
        self._serial = serial or threading.Lock()

    def paths_of(self, ctx: EchoContext, batch: WatchBatch) -> list[str]:
        """The notes of ``batch``: its ``.md`` paths, plus for each folder the notes in it
        now and the indexed paths under it (so a folder moved out drops its notes)."""
        paths = set(batch.notes)
        for folder in batch.folders:
            prefix = folder.rstrip("/") + "/"
            try:
                paths.update(p for p in ctx.storage.list(prefix) if p.endswith(".md"))
            except EchoError:
                pass  # gone: the indexed paths below say what it held
            paths.update(e.path for e in ctx.entities.load().entities.values()
                         if e.path.startswith(prefix))
            ranker = ctx.ranker_upkeep.ranker
            listed = getattr(ranker, "paths", None)
            if callable(listed):
                paths.update(p for p in listed() if p.startswith(prefix))
        return sorted(paths)

    def apply(self, batch: WatchBatch) -> None:
        """Sync the notes of ``batch`` (errors propagate: the watcher logs them); never
        while a job runs (``serial``: a sweep rebuilding an index from an earlier listing
        would otherwise undo a change synced meanwhile)."""
        with self._serial:
            started = time.perf_counter()
            ctx = self._context()
            paths = self.paths_of(ctx, batch)
            if not paths:
                return
            done = sync_changed(ctx, paths).sync
        log.info("vault watch: %d changed note(s) synced ms=%.0f: recall +%d -%d, "
                 "entities +%d -%d%s%s", len(paths), (time.perf_counter() - started) * 1000,
                 len(done.reindexed), len(done.dropped), len(done.entities_put),
                 len(done.entities_removed),
                 f", unreadable {len(done.unreadable)}" if done.unreadable else "",
                 ", entity index busy: the next change or sweep retries"
                 if done.entities_pending else "")


def sweep_temp_files(ctx: EchoContext) -> int:
    """Remove the stale temp files of a folder vault's ``VAULT_TEMP_DIR`` (see the module
    docstring); how many. Nothing for another backend; never raises."""
    try:
        root = folder_root(ctx.storage.identity)
    except Exception:  # noqa: BLE001 - no storage: nothing to sweep
        return 0
    if root is None:
        return 0
    removed = sweep_stale(root / VAULT_TEMP_DIR)
    if removed:
        log.info("removed %d temp file(s) of writers that are gone from %s", removed,
                 VAULT_TEMP_DIR)
    return removed


def fast_sweep_job(context: ContextOf) -> str:
    """One fast sweep on ``context()`` (and ``sweep_temp_files``); its message."""
    from echo_core import fast_sweep

    ctx = context()
    sweep_temp_files(ctx)
    return fast_sweep(ctx).message


def decay_job(context: ContextOf) -> str:
    """One run of the registered ``decay`` operation; its message."""
    from echo_core import invoke

    return str(invoke(context(), DECAY_OPERATION).message)


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value < 0:
        raise usage_error(f"{name}={raw!r}: give a number >= 0 (0 turns the job off)")
    return value


def check_settings(env: Mapping[str, str]) -> None:
    """Refuse a bad ``ECHO_WATCH`` or job interval (``EchoError`` 2) before serving."""
    watch_mode(env)
    _number(env, SWEEP_MINUTES_ENV, DEFAULT_SWEEP_MINUTES)
    _number(env, DECAY_HOURS_ENV, DEFAULT_DECAY_HOURS)


def sweeps_on_schedule(env: Mapping[str, str]) -> bool:
    """Whether the server runs the fast sweep job (``ECHO_SERVE_SWEEP_MINUTES`` > 0)."""
    return _number(env, SWEEP_MINUTES_ENV, DEFAULT_SWEEP_MINUTES) > 0


def serve_jobs(host: PluginHost, env: Mapping[str, str], context: ContextOf,
               serial: threading.Lock | None = None, *, swept: bool = False) -> list[Job]:
    """The scheduled jobs (see module docstring), each run holding ``serial`` (shared with
    the watcher's ``NoteSync``); a bad interval setting is 2. ``swept``: the warm-up ran
    a fast sweep just now, so the job's first run waits a whole interval."""
    held = serial or threading.Lock()

    def holding(work: Callable[[ContextOf], str]) -> Callable[[], str]:
        def run() -> str:
            with held:
                return work(context)
        return run

    jobs: list[Job] = []
    minutes = _number(env, SWEEP_MINUTES_ENV, DEFAULT_SWEEP_MINUTES)
    if minutes > 0:
        jobs.append(Job("fast-sweep", minutes * 60, holding(fast_sweep_job),
                        first_after=minutes * 60 if swept else 0.0))
    hours = _number(env, DECAY_HOURS_ENV, DEFAULT_DECAY_HOURS)
    if hours > 0 and _has_operation(host, DECAY_OPERATION):
        jobs.append(Job("decay", hours * 3600, holding(decay_job)))
    return jobs


def _has_operation(host: PluginHost, name: str) -> bool:
    from echo_core import OperationRegistry

    try:
        return OperationRegistry.from_host(host).get(name) is not None
    except EchoError:
        return False


@attrs.define
class ServerUpkeep:
    """The running watcher (None: not watching) and scheduler; ``close()`` stops both."""

    scheduler: JobScheduler
    watcher: VaultWatcher | None = None
    follower: ChangeFollower | None = None

    def start(self) -> None:
        """Start the threads."""
        for thread in (self.watcher, self.follower):
            if thread is not None:
                thread.start()
        self.scheduler.start()

    def close(self) -> None:
        """Stop them all and wait for their threads."""
        for thread in (self.watcher, self.follower):
            if thread is not None:
                thread.stop()
        self.scheduler.stop()


def plan_upkeep(host: PluginHost, env: Mapping[str, str], context: ContextOf, *,
                swept: bool = False) -> ServerUpkeep:
    """The watcher and jobs for this server, not started (settings checked: 2 when bad).
    ``context`` gives the calling thread's own context; ``swept`` as for ``serve_jobs``."""
    mode = watch_mode(env)
    serial = threading.Lock()
    jobs = serve_jobs(host, env, context, serial, swept=swept)
    scheduler = JobScheduler(jobs)
    names = {job.name: job for job in jobs}
    sweep = names.get("fast-sweep")
    log.info("jobs: %s; decay: %s", f"fast sweep every {sweep.every / 60:g} min" if sweep
             else f"fast sweep off ({SWEEP_MINUTES_ENV}=0)",
             f"every {names['decay'].every / 3600:g} h" if "decay" in names else
             "not scheduled (no decay operation is installed)")
    watcher = follower = None
    if mode == "off":
        log.info("vault watch: off (ECHO_WATCH=off)")
    else:
        follower = _follower(context, serial)
        if follower is None:
            watcher = _watcher(NoteSync(context, serial), context, mode, scheduler, sweep)
    return ServerUpkeep(scheduler, watcher, follower)


def _follower(context: ContextOf, serial: threading.Lock) -> ChangeFollower | None:
    """A ``ChangeFollower`` when the vault's storage has a change log to follow."""
    try:
        storage: Any = context().storage  # duck-typed: can_follow checks it
        if not can_follow(storage):
            return None
    except Exception:  # noqa: BLE001 - _watcher reports a storage it cannot open
        return None

    def catch_up() -> None:
        from echo_core import catch_up as catch_up_changes

        catch_up_changes(context(), lock_timeout=0.5)

    def replay_outbox() -> None:  # captures queued while the database was away
        from echo_core import invoke

        try:
            done = invoke(context(), "flush")
        except EchoError as exc:
            log.warning("change feed: outbox not replayed (%s)", exc.message)
            return
        if getattr(done.data, "synced", 0):
            log.info("change feed: %s", done.message)

    return ChangeFollower(storage.change_listener, catch_up, serial=serial,
                          on_connect=replay_outbox)


def _watcher(sync: NoteSync, context: ContextOf, mode: str, scheduler: JobScheduler,
             sweep: Job | None) -> VaultWatcher | None:
    try:
        identity = context().storage.identity
    except Exception as exc:  # noqa: BLE001 - e.g. no storage plugin: serving goes on
        log.warning("vault watch: off (%s)", exc)
        return None
    root = folder_root(identity)
    if importlib.util.find_spec("watchfiles") is None:
        log.warning("vault watch: off: the watchfiles package is missing (pip install "
                    "'echo-memory[mcp]'); edits made elsewhere reach the indexes through "
                    "the fast sweep job")
        return None
    if root is None:
        log.info("vault watch: off: %s is not a folder vault; edits made elsewhere reach "
                 "the indexes through the fast sweep job", identity)
        return None
    def catch_up() -> None:  # after a watcher restart: what changed while it was down
        if sweep is not None:
            scheduler.run_job(sweep)

    return VaultWatcher(root, sync.apply, polling=mode == "poll",
                        on_resume=catch_up)


def start_upkeep(host: PluginHost, env: Mapping[str, str], context: ContextOf,
                 live: LiveFlag | None = None, *, swept: bool = False) -> ServerUpkeep:
    """``plan_upkeep``, started; ``live`` (the contexts' ``live_watched``) is bound to the
    watcher (or the change follower)."""
    upkeep = plan_upkeep(host, env, context, swept=swept)
    if live is not None:
        live.watcher = upkeep.watcher or upkeep.follower
    upkeep.start()
    return upkeep
