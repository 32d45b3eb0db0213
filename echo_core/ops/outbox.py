"""Offline durability (SPEC §5.4): queue a write when the vault is unreachable, replay
it with ``flush``.

A capture queues as ONE semantic record (all its arguments + the day it was made) and
replays through capture, so routing and the gate re-run against the index as it is then;
raw writes (append, put, fm) queue too. A gate stop on replay flags the record
``needs_attention`` and does not block later records. Identical offline writes share an
idempotency key and queue once.

Exactly once: a queued capture carries its operation id (``op_id``); the replay passes it
to capture, which skips an operation the entity index has already committed — one that
landed in part before the vault went away (finished by ``ops.write_intent``), or one a
killed flush replayed without marking it done. Raw writes are idempotent by themselves.
``flush`` holds ``<state_dir>/outbox.flush.lock`` (an ``flock``: released by the kernel
when its holder dies), so concurrent flushes run one after another, and it replays only
into a vault that has its marker. Nothing is queued for an absent folder this machine
never saw as a vault (``echo_core.vault_seen``).
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from echo_core.context import EchoContext
from echo_core.errors import EchoError, ExitCode, LockHeldError
from echo_core.models import CaptureRequest, Envelope
from echo_core.protocols import BackendUnavailable, VaultMissing
from echo_core.vault_seen import missing_vault_error, require_initialised, was_seen

FLUSH_LOCK = "outbox.flush.lock"
#: How long ``flush`` waits for another process's flush before giving up (seconds).
FLUSH_WAIT = 120.0


@attrs.frozen
class QueuedResult:
    """A write that waits in the outbox."""

    queued_id: str
    op: str
    pending: int
    reason: str


def idempotency_key(op: str, args: dict[str, Any], day: str) -> str:
    """Identical writes on the same day share a key."""
    payload = json.dumps({"op": op, "args": args, "day": day}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:24]


def queue_or_raise(ctx: EchoContext, op: str, args: dict[str, Any],
                   down: BackendUnavailable, *, op_id: str | None = None) -> Envelope:
    """Queue the write ``op(**args)`` because the vault is down; re-raise when there is no
    outbox or the outbox itself is replaying (a replay never queues again).

    ``op_id``: the operation id the replay passes on (captures). An absent vault folder
    (``VaultMissing``) queues only when this machine saw a vault there (exit 69 and
    nothing queued otherwise), and the queued envelope is then ``ok=False`` (exit 69):
    the write is safe in the outbox but a person has to bring the folder back."""
    queue = ctx.queue
    if queue is None or ctx.replay_day is not None:
        raise down
    missing = isinstance(down, VaultMissing)
    if missing and not was_seen(ctx):
        raise missing_vault_error(ctx, down, op)
    day = ctx.today().isoformat()
    record: dict[str, Any] = {"op": op, "args": args, "day": day,
                              "idempotency_key": idempotency_key(op, args, day)}
    if op_id is not None:
        record["op_id"] = op_id
    rid = queue.put(record)
    pending = len(queue.pending())
    if missing:
        message = (f"vault folder is missing ({down}); {op} kept in the outbox ({pending} "
                   "waiting): bring the folder back (mount the drive, undo the move), then "
                   "run `echo-memory flush`")
    else:
        message = (f"vault unreachable ({down}); {op} queued in the outbox ({pending} "
                   "waiting) — `echo-memory flush` replays it when the vault is back")
    return Envelope(not missing, "queued", message, QueuedResult(rid, op, pending, str(down)))


def capture_args(request: CaptureRequest) -> dict[str, Any]:
    """The queued form of a (validated) capture request: its fields as JSON values,
    without ``dry_run`` (a dry run never queues)."""
    return {k: (list(v) if isinstance(v, tuple) else v)
            for k, v in attrs.asdict(request, recurse=False).items() if k != "dry_run"}


def queue_capture(ctx: EchoContext, request: CaptureRequest, down: BackendUnavailable, *,
                  op_id: str | None = None) -> Envelope:
    """Queue ``request`` as one capture record, as ``capture`` does when it meets ``down``
    (see ``queue_or_raise`` for when it raises instead)."""
    from echo_core.ops.capture_request import validate_request

    args = capture_args(validate_request(request, ctx.manifest))
    return queue_or_raise(ctx, "capture", args, down, op_id=op_id)


def _replay_capture(ctx: EchoContext, args: dict[str, Any], op_id: str | None) -> Envelope:
    from echo_core.ops.capture import capture

    fields: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v) for k, v in args.items()}
    return capture(ctx, CaptureRequest(**fields), op_id=op_id)


def _replay_append(ctx: EchoContext, args: dict[str, Any], op_id: str | None) -> Envelope:
    from echo_core.ops.notes_io import append_line

    return append_line(ctx, args["path"], args["line"])


def _replay_put(ctx: EchoContext, args: dict[str, Any], op_id: str | None) -> Envelope:
    from echo_core.ops.notes_io import put_note

    return put_note(ctx, args["path"], args["text"])


def _replay_fm(ctx: EchoContext, args: dict[str, Any], op_id: str | None) -> Envelope:
    from echo_core.ops.notes_io import set_frontmatter

    return set_frontmatter(ctx, args["path"], args["key"], args["value"])


Replayer = Callable[[EchoContext, dict[str, Any], "str | None"], Envelope]
REPLAYERS: dict[str, Replayer] = {
    "capture": _replay_capture, "append": _replay_append, "put": _replay_put,
    "fm": _replay_fm,
}


@attrs.frozen
class FlushItem:
    """What happened to one queued record."""

    id: str
    op: str
    outcome: str  # synced | needs_attention | pending
    detail: str = ""
    path: str | None = None


@attrs.frozen
class FlushResult:
    """Synced, still pending and needing attention."""

    synced: int
    pending: int
    needs_attention: int
    items: tuple[FlushItem, ...] = ()
    reachable: bool = True


class FlushBusy(LockHeldError):
    """Another process holds the flush lock (exit 75)."""


@contextmanager
def flush_lock(ctx: EchoContext, wait: float) -> Iterator[None]:
    """Hold ``<state_dir>/outbox.flush.lock``; wait up to ``wait`` seconds for another
    flush to finish (``FlushBusy`` after that; ``wait=0`` tries once)."""
    fd = os.open(ctx.state_dir / FLUSH_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise FlushBusy("another process is flushing the outbox right now; its "
                                    "records are being replayed — run `echo-memory flush` "
                                    "again later to see what is left") from None
                time.sleep(0.02)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def flush(ctx: EchoContext, *, wait: float = FLUSH_WAIT) -> Envelope:
    """Replay every pending record, oldest first, exactly once (see module docstring).
    Records already flagged ``needs_attention`` are retried too (they may pass now).
    Stops at the first sign the vault is down again; everything not replayed stays
    queued. Errors: 75 (``FlushBusy``) when another flush holds the lock beyond ``wait``."""
    queue = ctx.queue
    if queue is None:
        return Envelope(True, "flushed", "no outbox plugin installed; nothing to flush",
                        FlushResult(0, 0, 0))
    if not queue.pending():
        return _flush_result([], reachable=True, note="")
    with flush_lock(ctx, wait):
        records = list(queue.pending())  # re-read: a flush that held the lock replayed some
        reachable, note = _vault_ready(ctx) if records else (True, "")
        items: list[FlushItem] = []
        for record in records:
            if reachable:
                items.append(_replay(ctx, queue, record))
                reachable = items[-1].detail != _WENT_AWAY
            else:
                items.append(FlushItem(str(record["id"]), str(record.get("op")), "pending",
                                       str(record.get("detail", ""))))
    return _flush_result(items, reachable=reachable, note=note)


_WENT_AWAY = "vault went away during the flush"


def _vault_ready(ctx: EchoContext) -> tuple[bool, str]:
    """Whether records may be replayed now: the vault is reachable and has its marker
    (a queued write never lands in a folder that is not a vault), and every write an
    interrupted operation left half-done is finished first."""
    from echo_core.ops.write_intent import recover_pending

    try:
        ctx.vault.storage.ping()
        require_initialised(ctx)
        with ctx.vault.storage.lock():
            recover_pending(ctx)
    except BackendUnavailable:
        return False, ""
    except EchoError as error:
        if error.code != ExitCode.NOT_CONFIGURED:
            raise
        return False, f"; not replayed: {error.message}"
    return True, ""


def _replay(ctx: EchoContext, queue: Any, record: Any) -> FlushItem:
    rid, op = str(record["id"]), str(record.get("op"))
    replay = REPLAYERS.get(op)
    if replay is None:
        queue.mark(rid, "needs_attention", f"unknown operation {op!r}")
        return FlushItem(rid, op, "needs_attention", f"unknown operation {op!r}")
    ctx.replay_day = _dt.date.fromisoformat(str(record.get("day") or ctx.today().isoformat()))
    try:
        # a record queued without an op id (an older version's) replays under one derived
        # from its record id, so a second replay of it is recognised all the same
        op_id = str(record.get("op_id") or f"outbox-{rid}")
        envelope = replay(ctx, dict(record.get("args") or {}), op_id)
    except BackendUnavailable:
        return FlushItem(rid, op, "pending", _WENT_AWAY)
    except EchoError as error:
        detail = f"{error.code_name}: {error.message}"
        queue.mark(rid, "needs_attention", detail)
        return FlushItem(rid, op, "needs_attention", detail)
    finally:
        ctx.replay_day = None
    path = getattr(envelope.data, "path", None)
    if envelope.action == "duplicate-gate":
        queue.mark(rid, "needs_attention", envelope.message)
        return FlushItem(rid, op, "needs_attention", envelope.message, path)
    queue.mark(rid, "done", envelope.action)
    return FlushItem(rid, op, "synced", envelope.action, path)


def _flush_result(items: list[FlushItem], *, reachable: bool, note: str) -> Envelope:
    synced = sum(1 for i in items if i.outcome == "synced")
    attention = sum(1 for i in items if i.outcome == "needs_attention")
    pending = sum(1 for i in items if i.outcome == "pending")
    message = f"{synced} synced, {pending} pending, {attention} need attention"
    if not reachable:
        message += " (vault unreachable)" if not note else note
    return Envelope(True, "flushed", message,
                    FlushResult(synced, pending, attention, tuple(items), reachable))
