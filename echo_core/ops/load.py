"""``load`` / ``load --brief`` (SPEC §4.1): what an agent reads at the start of a session.

Steps: ping the backend; the outbox flush (no outbox plugin ships yet: the step reports
that, or a registered queue's pending count, and replays nothing); read in parallel the
marker, operator preferences, current context, heartbeat, today's daily note, the inbox
and the sessions listing, then the session log the heartbeat points to; render the digest
(``echo_core.ops.digest``); fire ``on_session_start`` once.

Budgets: the brief digest gets ``ECHO_LOAD_BUDGET`` characters (default 8000, minimum
200). The full digest gets ``FULL_BUDGET_FACTOR`` (3) times that (default 24000): the
brief digest within its own budget, then the full note texts in the rest.

Failures: a missing daily note or inbox is ``absent``; any other unreadable file is an
``error`` section and the load goes on. A vault without the marker is ``EchoError`` 78
(run ``init``). An unreachable backend (``BackendUnavailable``) gives ``ok=False``, action
``unreachable``, and the message "vault unreachable; proceed without memory" — the
last-known-good cache of SPEC §4.1/§5.4 arrives with the offline-durability issue.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Mapping
from typing import Any

import attrs

from echo_core.context import EchoContext
from echo_core.errors import EchoError, ExitCode, usage_error
from echo_core.models import Envelope
from echo_core.ops.daily import daily_note_path
from echo_core.ops.digest import Read, Section, VaultSnapshot, render_digest, sections_text
from echo_core.ops.scope import CONTEXT_PATH, SESSIONS_DIR
from echo_core.protocols import BackendUnavailable, Storage
from echo_core.vault import INBOX_PATH, MARKER_PATH

HEARTBEAT_PATH = "_agent/heartbeat/last-session.md"
PREFERENCES_PATH = "_agent/memory/semantic/operator-preferences.md"
BUDGET_ENV = "ECHO_LOAD_BUDGET"
DEFAULT_BUDGET = 8000
MIN_BUDGET = 200
FULL_BUDGET_FACTOR = 3
UNREACHABLE = "vault unreachable; proceed without memory"
_READ_WORKERS = 8


@attrs.frozen
class LoadResult:
    """The digest (``digest``, ``chars`` <= ``budget``) and its ordered ``sections``.

    ``outbox`` says what the outbox step did; ``session_log`` is the log the heartbeat
    points to (None before the first committed session).
    """

    brief: bool
    sections: tuple[Section, ...]
    digest: str
    budget: int
    chars: int
    outbox: str
    session_log: str | None = None


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


def _read(storage: Storage, path: str) -> Read:
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


def _list(storage: Storage, prefix: str) -> tuple[tuple[str, ...], str]:
    try:
        return tuple(storage.list(prefix)), ""
    except BackendUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - reported in the scope / marker sections
        return (), (exc.message if isinstance(exc, EchoError) else f"{type(exc).__name__}: {exc}")


def read_snapshot(ctx: EchoContext, outbox_note: str = "") -> VaultSnapshot:
    """Read everything the digest needs, in parallel (then the session log the heartbeat
    names). Raises ``BackendUnavailable`` when the backend is down; otherwise never."""
    storage = ctx.vault.storage
    today = ctx.today()
    paths = {"marker": MARKER_PATH, "preferences": PREFERENCES_PATH, "context": CONTEXT_PATH,
             "heartbeat": HEARTBEAT_PATH, "daily": daily_note_path(today), "inbox": INBOX_PATH}
    with concurrent.futures.ThreadPoolExecutor(_READ_WORKERS) as pool:
        futures = {name: pool.submit(_read, storage, path) for name, path in paths.items()}
        listing = pool.submit(_list, storage, SESSIONS_DIR)
        reads = {name: future.result() for name, future in futures.items()}
        sessions, sessions_error = listing.result()
    heartbeat = reads["heartbeat"]
    log_path, stamp = parse_heartbeat(heartbeat.text) if heartbeat.status == "ok" else (None, None)
    session_log = _read(storage, log_path) if log_path else None
    return VaultSnapshot(
        today=today, expected_schema=str(ctx.manifest.schema_version),
        marker=reads["marker"], preferences=reads["preferences"], context=reads["context"],
        heartbeat=heartbeat, daily=reads["daily"], inbox=reads["inbox"],
        sessions=sessions, sessions_error=sessions_error, session_log=session_log,
        heartbeat_time=stamp, outbox_note=outbox_note)


def outbox_step(ctx: EchoContext) -> tuple[str, str]:
    """The outbox flush: ``(status for the result, note for the digest or "")``.

    No replay happens yet (the outbox issue adds it): with no queue plugin this says so;
    with one, it reports the pending count when the queue offers ``pending()``."""
    try:
        queues = ctx.host.collect("register_queues")
    except Exception as exc:  # noqa: BLE001 - the outbox step never fails a load
        return f"outbox check failed: {exc}", ""
    if not queues:
        return "no outbox plugin installed; nothing to flush", ""
    notes: list[str] = []
    waiting = 0
    for name, factory in sorted(queues.items()):
        try:
            queue = factory(str(ctx.state_dir))
            pending = len(queue.pending()) if hasattr(queue, "pending") else None
        except Exception as exc:  # noqa: BLE001 - the outbox step never fails a load
            notes.append(f"{name}: unreadable ({type(exc).__name__}: {exc})")
            continue
        if pending is None:
            notes.append(f"{name}: pending count unknown")
        else:
            waiting += pending
            notes.append(f"{name}: {pending} pending")
    status = "not flushed yet (replay comes with the outbox issue); " + ", ".join(notes)
    return status, (f"outbox: {waiting} queued writes not yet synced" if waiting else "")


def load(ctx: EchoContext, *, brief: bool) -> Envelope:
    """Load the session digest (see module docstring). Result data: ``LoadResult``.

    Errors: 2 for a bad ``ECHO_LOAD_BUDGET``, 78 when the vault is not initialised or no
    storage plugin serves it. Unreachable backend: ``ok=False``, action ``unreachable``.
    Side effects: none on the vault; fires ``on_session_start`` once after a successful
    digest (a failing listener is a warning)."""
    budget = load_budget(ctx.env, brief=brief)
    outbox = "not checked (vault unreachable)"
    try:
        ctx.vault.storage.ping()
        outbox, outbox_note = outbox_step(ctx)
        snapshot = read_snapshot(ctx, outbox_note)
    except BackendUnavailable as down:
        message = f"{UNREACHABLE} ({down})"
        return Envelope(False, "unreachable", message,
                        LoadResult(brief, (), message, budget, len(message), outbox))
    if snapshot.marker.status == "absent":
        raise EchoError(f"vault {ctx.config.vault.value} is not initialised (no {MARKER_PATH});"
                        " run `echo-memory init` first", ExitCode.NOT_CONFIGURED)
    brief_budget = load_budget(ctx.env, brief=True)
    sections = render_digest(snapshot, brief=brief, budget=brief_budget, full_budget=budget)
    digest = sections_text(list(sections))
    log_path = snapshot.session_log.path if snapshot.session_log is not None else None
    result = LoadResult(brief, sections, digest, budget, len(digest), outbox, log_path)
    warnings = fire_event(ctx, "on_session_start", ctx=ctx)
    trimmed = [s.name for s in sections if s.status == "truncated"]
    problems = [s.name for s in sections if s.status == "error"]
    message = f"{'brief' if brief else 'full'} digest: {len(digest)} of {budget} characters"
    if trimmed:
        message += f"; truncated: {', '.join(trimmed)}"
    if problems:
        message += f"; unreadable: {', '.join(problems)}"
    return Envelope(True, "loaded", message, result, warnings)
