"""``load`` / ``load --brief`` (SPEC §4.1): what an agent reads at the start of a session.

Steps: ping the backend; flush the outbox (queued offline writes replay first, so the
digest sees them); read in parallel the
marker, operator preferences, current context, heartbeat, today's daily note, the inbox,
the sessions listing (kept per machine while no folder under it changed:
``echo_core.ops.session_logs``) and the semantic-memory listing, then the session log the
heartbeat points to and the semantic memory notes (at most ``SEMANTIC_READ_LIMIT``: every
capture or session-end reflection of kind ``semantic`` - the operator's preferences and
the facts learned - which the brief lists under Fact / Pattern); render the digest
(``echo_core.ops.digest``); fire ``on_session_start`` once.

Budgets: the brief digest gets ``ECHO_LOAD_BUDGET`` characters (default 8000, minimum
200). The full digest gets ``FULL_BUDGET_FACTOR`` (3) times that (default 24000): the
brief digest within its own budget, then the full note texts in the rest.

Failures: a missing daily note or inbox is ``absent``; any other unreadable file is an
``error`` section and the load goes on. A vault without the marker is ``EchoError`` 78
(run ``init``).

Last-known-good cache (SPEC §4.1, §5.4; ``echo_core.read_cache``): every successful load
saves what it read to ``<state_dir>/read-cache``. When the backend is unreachable
(``BackendUnavailable`` from the ping or a read), the digest is built from that cache:
``ok=True``, action ``loaded-from-cache``, and the digest opens with an ``offline`` section
"vault unreachable — showing last-known-good memory from <saved_at>; nothing new was
saved". With no cache: ``ok=False``, action ``unreachable``, and the message "vault
unreachable; proceed without memory".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Self

import attrs

from echo_core.actions import Action
from echo_core.errors import EchoError, ExitCode, NotConfiguredError, usage_error
from echo_core.models import Envelope
from echo_core.ops.always_load import read_always_load
from echo_core.ops.daily import daily_note_path
from echo_core.ops.digest import (
    Read,
    Section,
    SemanticMemory,
    VaultSnapshot,
    render_digest,
    sections_text,
)
from echo_core.ops.scope import CONTEXT_PATH, SESSIONS_DIR, count_phrase
from echo_core.ops.session_logs import SessionLogsSource
from echo_core.protocols import BackendUnavailable, VaultMissing
from echo_core.read_cache import FOLDER as READ_CACHE_FOLDER
from echo_core.read_cache import ReadCache, ReadSource, RecordingReader
from echo_core.vault import INBOX_PATH, MARKER_PATH

if TYPE_CHECKING:
    from echo_core.context import EchoContext

HEARTBEAT_PATH = "_agent/heartbeat/last-session.md"
PREFERENCES_PATH = "_agent/memory/semantic/operator-preferences.md"
BUDGET_ENV = "ECHO_LOAD_BUDGET"
DEFAULT_BUDGET = 8000
MIN_BUDGET = 200
FULL_BUDGET_FACTOR = 3
UNREACHABLE = "vault unreachable; proceed without memory"
FROM_CACHE = ("vault unreachable — showing last-known-good memory from {saved_at}; "
              "nothing new was saved")
_READ_WORKERS = 8
SEMANTIC_KIND = "semantic"
#: At most this many semantic memory notes are read for the brief (the newest names last).
SEMANTIC_READ_LIMIT = 200


@attrs.frozen
class LoadResult:
    """The digest (``digest``, ``chars`` <= ``budget``) and its ordered ``sections``.

    ``outbox`` says what the outbox step did; ``session_log`` is the log the heartbeat
    points to (None before the first committed session); ``from_cache`` is when the
    last-known-good cache the digest came from was saved (None: read from the vault).
    """

    brief: bool
    sections: tuple[Section, ...]
    digest: str
    budget: int
    chars: int
    outbox: str
    session_log: str | None = None
    from_cache: str | None = None


def load_budget(env: Mapping[str, str], *, brief: bool) -> int:
    """The character budget: ``ECHO_LOAD_BUDGET`` (default 8000), times 3 for a full load.
    Errors: 2 when the variable is not a whole number >= 200."""
    raw = env.get(BUDGET_ENV, "").strip()
    budget = DEFAULT_BUDGET
    if raw:
        try:
            budget = int(raw)
        except ValueError:
            budget = -1
        if budget < MIN_BUDGET:
            raise usage_error(f"{BUDGET_ENV}={raw!r}: give a whole number of characters, at "
                              f"least {MIN_BUDGET} (default {DEFAULT_BUDGET})")
    return budget if brief else budget * FULL_BUDGET_FACTOR


def parse_heartbeat(text: str) -> tuple[str | None, str | None]:
    """``(session-log path, ISO timestamp)`` of a heartbeat line ``"<path> @ <time>"``.

    The path is None when the heartbeat names no ``.md`` file (``"(no session yet)"``)."""
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    path, sep, stamp = line.rpartition(" @ ")
    if not sep:
        path, stamp = line, ""
    path = path.strip()
    return (path if path.endswith(".md") else None), (stamp.strip() or None)


def fire_event(echo: EchoContext, hook_name: str, **kwargs: Any) -> tuple[str, ...]:
    """Call event hook ``hook_name`` of ``echo``'s host with ``kwargs``; a failing listener
    becomes a warning (raises when the host is strict)."""
    try:
        getattr(echo.host.hook, hook_name)(**kwargs)
    except Exception as exc:  # a listener never fails the operation
        if echo.host.strict:
            raise
        return (f"{hook_name}: a plugin failed ({type(exc).__name__}: {exc})",)
    return ()


def _read(storage: ReadSource, path: str) -> Read:
    try:
        return Read(path, "ok", storage.read(path))
    except BackendUnavailable:
        raise
    except EchoError as exc:
        if exc.code == ExitCode.NOT_FOUND:
            return Read(path, "absent")
        return Read(path, "error", error=exc.message)
    except Exception as exc:  # noqa: BLE001 - any failure is reported in its section
        return Read(path, "error", error=f"{type(exc).__name__}: {exc}")


def _list(storage: ReadSource, prefix: str) -> tuple[tuple[str, ...], str]:
    try:
        return tuple(storage.list(prefix)), ""
    except BackendUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - reported in the scope / marker sections
        return (), (exc.message if isinstance(exc, EchoError) else f"{type(exc).__name__}: {exc}")


class _Done:
    """A call already made, as a future: ``result()`` returns its value."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def result(self) -> Any:
        return self._value


class _Inline:
    """A pool that runs each call at once, in this thread (``submit`` -> ``_Done``)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, fn: Callable[..., Any], *args: Any) -> _Done:
        return _Done(fn(*args))


def _read_pool(storage: Any) -> Any:
    """Threads for a storage whose reads wait on a network (``_READ_WORKERS`` at once);
    the calling thread for local files (``fork_safe_reads``: a folder vault), where a
    read takes microseconds and a thread pool (with ``concurrent.futures`` and
    ``logging`` to import) costs a cold hook more than it saves."""
    from echo_core.storage_base import fork_safe_reads

    if fork_safe_reads(storage):
        return _Inline()
    import concurrent.futures

    return concurrent.futures.ThreadPoolExecutor(_READ_WORKERS)


def read_snapshot(ctx: EchoContext, outbox_note: str = "",
                  source: ReadSource | None = None) -> VaultSnapshot:
    """Read everything the digest needs, in parallel: the fixed files and listings, the
    semantic memory notes the listing names, the session log the heartbeat names; from
    ``source`` (default: the vault's storage).
    Raises ``BackendUnavailable`` when the backend is down; otherwise never."""
    storage = source if source is not None else ctx.vault.storage
    today = ctx.today()
    paths = {"marker": MARKER_PATH, "preferences": PREFERENCES_PATH, "context": CONTEXT_PATH,
             "heartbeat": HEARTBEAT_PATH, "daily": daily_note_path(today), "inbox": INBOX_PATH}
    folder = ctx.manifest.route(SEMANTIC_KIND).folder
    with _read_pool(ctx.vault.storage) as pool:  # the backend's reads, whatever wraps them
        futures = {name: pool.submit(_read, storage, path) for name, path in paths.items()}
        listing = pool.submit(_list, storage, SESSIONS_DIR)
        memory_listing = pool.submit(_list, storage, folder)
        semantic, semantic_error = memory_listing.result()
        notes = sorted(p for p in semantic if p.endswith(".md") and p != PREFERENCES_PATH
                       and not p.endswith("/README.md"))
        unread = max(0, len(notes) - SEMANTIC_READ_LIMIT)
        memory = [pool.submit(_read, storage, p) for p in notes[unread:]]
        reads = {name: future.result() for name, future in futures.items()}
        heartbeat = reads["heartbeat"]
        log_path, stamp = (parse_heartbeat(heartbeat.text) if heartbeat.status == "ok"
                           else (None, None))
        log_read = pool.submit(_read, storage, log_path) if log_path else None
        sessions, sessions_error = listing.result()
        semantic_reads = tuple(future.result() for future in memory)
        session_log = log_read.result() if log_read is not None else None
    return VaultSnapshot(
        today=today, expected_schema=str(ctx.manifest.schema_version),
        marker=reads["marker"], preferences=reads["preferences"], context=reads["context"],
        heartbeat=heartbeat, daily=reads["daily"], inbox=reads["inbox"],
        sessions=sessions, sessions_error=sessions_error, session_log=session_log,
        heartbeat_time=stamp, outbox_note=outbox_note,
        semantic=SemanticMemory(folder, semantic_reads, semantic_error, unread),
        always_load=tuple(Read(path, "ok", text)
                          for path, text in read_always_load(ctx, storage)))


def _finish_interrupted(ctx: EchoContext) -> None:
    """Finish the writes of an operation killed part-way (``write_intent``), so a session
    does not start on a half-made capture (a note without its backlinks); cheap when there
    is none (one folder listing); never fails a load (the next write retries)."""
    from echo_core.ops.write_intent import pending_intents, recover_pending

    try:
        if pending_intents(ctx):
            with ctx.vault.storage.lock(timeout=2.0):
                recover_pending(ctx)
    except Exception as exc:  # noqa: BLE001 - a load never fails on it
        from echo_core.lazy_log import lazy_logger

        lazy_logger("echo_memory").info("interrupted writes not finished now (%s); the "
                                        "next write does it", exc)


def outbox_step(ctx: EchoContext) -> tuple[str, str]:
    """The outbox flush (SPEC §4.1: first): ``(status for the result, note for the digest
    or "")``. Replays queued writes through ``echo_core.ops.outbox.flush``; never fails a
    load (a failure is reported in the status)."""
    from echo_core.ops.outbox import FlushBusy, flush

    _finish_interrupted(ctx)
    try:
        if ctx.queue is None:
            return "no outbox plugin installed; nothing to flush", ""
        result = flush(ctx, wait=0).data
    except FlushBusy:
        return "not flushed: another process is flushing the outbox now", ""
    except Exception as exc:  # noqa: BLE001 - the outbox step never fails a load
        return f"outbox flush failed: {type(exc).__name__}: {exc}", ""
    need = f"{result.needs_attention} need{'s' if result.needs_attention == 1 else ''} attention"
    status = f"flushed: {result.synced} synced, {result.pending} pending, {need}"
    if not (result.synced or result.pending or result.needs_attention):
        return status, ""
    note = (f"outbox: {count_phrase(result.synced, 'queued write')} synced now, "
            f"{result.pending} still waiting, {need} (`echo-memory flush` lists them)")
    return status, note


def _offline_outbox(ctx: EchoContext) -> str:
    try:
        queue = ctx.queue
        return ("not checked (vault unreachable)" if queue is None else
                f"not flushed (vault unreachable); {len(queue.pending())} writes waiting")
    except Exception:  # noqa: BLE001
        return "not checked (vault unreachable)"


def load(ctx: EchoContext, *, brief: bool) -> Envelope[LoadResult]:
    """Load the session digest (see module docstring). Result data: ``LoadResult``.

    Errors: 2 for a bad ``ECHO_LOAD_BUDGET``, 78 when the vault is not initialised or no
    storage plugin serves it. Unreachable backend: the digest from the last-known-good
    cache (action ``loaded-from-cache``), else ``ok=False``, action ``unreachable``.
    Side effects: none on the vault; saves the read cache in the state dir (a failure is
    a warning); fires ``on_session_start`` once after a digest (a failing listener is a
    warning)."""
    budget = load_budget(ctx.env, brief=brief)
    outbox = "not checked (vault unreachable)"
    recorder = RecordingReader(SessionLogsSource(ctx))
    try:
        ctx.vault.storage.ping()
        outbox, outbox_note = outbox_step(ctx)
        snapshot = read_snapshot(ctx, outbox_note, recorder)
    except BackendUnavailable as down:
        return _load_from_cache(ctx, brief=brief, budget=budget, outbox=_offline_outbox(ctx),
                                down=down)
    if snapshot.marker.status == "absent":
        from echo_core.vault_seen import shown_vault

        raise NotConfiguredError(f"vault {shown_vault(ctx.config.vault.value)} is not "
                                 f"initialised (no {MARKER_PATH}); run `echo-memory init` first")
    warnings = _save_read_cache(ctx, recorder)
    from echo_core.ops.transfer_progress import unfinished_text  # an import cut short

    unfinished = unfinished_text(ctx.vault.storage)
    return _digest(ctx, snapshot, brief=brief, budget=budget, outbox=outbox, warnings=warnings,
                   banner=Section("import", unfinished, "ok") if unfinished else None)


def _save_read_cache(ctx: EchoContext, recorder: RecordingReader) -> tuple[str, ...]:
    try:
        ReadCache(ctx.state_dir / READ_CACHE_FOLDER).save(
            recorder.notes, saved_at=ctx.now().isoformat(timespec="seconds"),
            listings=recorder.listings, failed=sorted(recorder.failed))
    except OSError as exc:
        warning = (f"the last-known-good cache was not saved ({exc}); an offline load "
                   "will not show this memory")
        return (warning,)
    return ()


def _load_from_cache(ctx: EchoContext, *, brief: bool, budget: int, outbox: str,
                     down: BackendUnavailable) -> Envelope[LoadResult]:
    cached = ReadCache(ctx.state_dir / READ_CACHE_FOLDER).load()
    if cached is None:
        reason = str(down)
        if isinstance(down, VaultMissing):  # the words every verb uses for it (item 14)
            from echo_core.vault_seen import vault_missing_error

            reason = vault_missing_error(ctx, down).message
        message = f"{UNREACHABLE} ({reason})"
        return Envelope(False, Action.UNREACHABLE, message,
                        LoadResult(brief, (), message, budget, len(message), outbox))
    snapshot = read_snapshot(ctx, source=cached.reader())
    banner = Section("offline", FROM_CACHE.format(saved_at=cached.saved_at), "ok")
    return _digest(ctx, snapshot, brief=brief, budget=budget, outbox=outbox, banner=banner,
                   from_cache=cached.saved_at, warnings=(f"backend unavailable: {down}",))


def _digest(ctx: EchoContext, snapshot: VaultSnapshot, *, brief: bool, budget: int,
            outbox: str, warnings: tuple[str, ...] = (), banner: Section | None = None,
            from_cache: str | None = None) -> Envelope[LoadResult]:
    """Render ``snapshot`` (after ``banner``, whose length comes off both budgets), fire
    ``on_session_start`` and wrap the result."""
    reserve = len(banner.text) + len("\n\n") if banner is not None else 0
    brief_budget = load_budget(ctx.env, brief=True)
    sections = render_digest(snapshot, brief=brief, budget=brief_budget - reserve,
                             full_budget=budget - reserve)
    if banner is not None:
        sections = (banner, *sections)
    digest = sections_text(list(sections))
    log_path = snapshot.session_log.path if snapshot.session_log is not None else None
    result = LoadResult(brief, sections, digest, budget, len(digest), outbox, log_path,
                        from_cache)
    warnings += fire_event(ctx, "on_session_start", ctx=ctx)
    trimmed = [s.name for s in sections if s.status == "truncated"]
    problems = [s.name for s in sections if s.status == "error"]
    message = f"{'brief' if brief else 'full'} digest: {len(digest)} of {budget} characters"
    if from_cache is not None:
        message = f"{banner.text if banner else ''}; {message}"
    if trimmed:
        message += f"; truncated: {', '.join(trimmed)}"
    if problems:
        message += f"; unreadable: {', '.join(problems)}"
    action = Action.LOADED if from_cache is None else Action.LOADED_FROM_CACHE
    return Envelope(True, action, message, result, warnings)
