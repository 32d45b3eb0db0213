"""Offline durability (SPEC §5.4): queue a write when the vault is unreachable, replay
it with ``flush``.

A capture queues as ONE semantic record (all its arguments + the day it was made) and
replays through capture, so routing and the gate re-run against the index as it is then;
raw writes (append, put, fm) queue too. A gate stop on replay flags the record
``needs_attention`` and does not block later records. Identical offline writes share an
idempotency key and queue once.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Callable
from typing import Any

import attrs

from echo_core.context import EchoContext
from echo_core.errors import EchoError
from echo_core.models import CaptureRequest, Envelope
from echo_core.protocols import BackendUnavailable


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
                   down: BackendUnavailable) -> Envelope:
    """Queue the write ``op(**args)`` because the vault is down; re-raise when there is no
    outbox or the outbox itself is replaying (a replay never queues again)."""
    queue = ctx.queue
    if queue is None or ctx.replay_day is not None:
        raise down
    day = ctx.today().isoformat()
    rid = queue.put({"op": op, "args": args, "day": day,
                     "idempotency_key": idempotency_key(op, args, day)})
    pending = len(queue.pending())
    message = (f"vault unreachable ({down}); {op} queued in the outbox ({pending} waiting) — "
               "`echo-memory flush` replays it when the vault is back")
    return Envelope(True, "queued", message, QueuedResult(rid, op, pending, str(down)))


def _replay_capture(ctx: EchoContext, args: dict[str, Any]) -> Envelope:
    from echo_core.ops.capture import capture

    fields: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v) for k, v in args.items()}
    return capture(ctx, CaptureRequest(**fields))


def _replay_append(ctx: EchoContext, args: dict[str, Any]) -> Envelope:
    from echo_core.ops.notes_io import append_line

    return append_line(ctx, args["path"], args["line"])


def _replay_put(ctx: EchoContext, args: dict[str, Any]) -> Envelope:
    from echo_core.ops.notes_io import put_note

    return put_note(ctx, args["path"], args["text"])


def _replay_fm(ctx: EchoContext, args: dict[str, Any]) -> Envelope:
    from echo_core.ops.notes_io import set_frontmatter

    return set_frontmatter(ctx, args["path"], args["key"], args["value"])


REPLAYERS: dict[str, Callable[[EchoContext, dict[str, Any]], Envelope]] = {
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


def flush(ctx: EchoContext) -> Envelope:
    """Replay every pending record, oldest first. Records already flagged
    ``needs_attention`` are retried too (they may pass now). Stops at the first sign the
    vault is down again; everything not replayed stays queued."""
    queue = ctx.queue
    if queue is None:
        return Envelope(True, "flushed", "no outbox plugin installed; nothing to flush",
                        FlushResult(0, 0, 0))
    records = list(queue.pending())
    items: list[FlushItem] = []
    reachable = True
    try:
        ctx.vault.storage.ping()
    except BackendUnavailable:
        reachable = False
    for record in records:
        rid, op = str(record["id"]), str(record.get("op"))
        if not reachable:
            items.append(FlushItem(rid, op, "pending", str(record.get("detail", ""))))
            continue
        replay = REPLAYERS.get(op)
        if replay is None:
            queue.mark(rid, "needs_attention", f"unknown operation {op!r}")
            items.append(FlushItem(rid, op, "needs_attention", f"unknown operation {op!r}"))
            continue
        ctx.replay_day = _dt.date.fromisoformat(str(record.get("day") or ctx.today().isoformat()))
        try:
            envelope = replay(ctx, dict(record.get("args") or {}))
        except BackendUnavailable:
            reachable = False
            items.append(FlushItem(rid, op, "pending", "vault went away during the flush"))
            continue
        except EchoError as error:
            detail = f"{error.code_name}: {error.message}"
            queue.mark(rid, "needs_attention", detail)
            items.append(FlushItem(rid, op, "needs_attention", detail))
            continue
        finally:
            ctx.replay_day = None
        path = getattr(envelope.data, "path", None)
        if envelope.action == "duplicate-gate":
            detail = envelope.message
            queue.mark(rid, "needs_attention", detail)
            items.append(FlushItem(rid, op, "needs_attention", detail, path))
        else:
            queue.mark(rid, "done", envelope.action)
            items.append(FlushItem(rid, op, "synced", envelope.action, path))
    synced = sum(1 for i in items if i.outcome == "synced")
    attention = sum(1 for i in items if i.outcome == "needs_attention")
    pending = sum(1 for i in items if i.outcome == "pending")
    message = f"{synced} synced, {pending} pending, {attention} need attention"
    if not reachable:
        message += " (vault unreachable)"
    return Envelope(True, "flushed", message,
                    FlushResult(synced, pending, attention, tuple(items), reachable))

