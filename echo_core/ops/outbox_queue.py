"""Putting a write the vault could not take into the offline outbox (SPEC §5.4), and the
``Replay`` that tells an operation it is being replayed from there.

Capture and the raw writes (``ops.notes_io``) queue through here when they meet
``BackendUnavailable``; ``ops.outbox`` replays the records with ``flush``. A capture
queues as ONE semantic record (its validated request + the day it was made); identical
offline writes of one day share an idempotency key and queue once.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.actions import Action
from echo_core.models import CaptureRequest, Envelope
from echo_core.protocols import BackendUnavailable, VaultMissing
from echo_core.vault_seen import missing_vault_error, vault_gone_text, was_seen

if TYPE_CHECKING:
    from echo_core.context import EchoContext


@attrs.frozen
class Replay:
    """A queued write being replayed by ``flush``: ``day`` is the day it was made (its
    dates, dated slugs and daily-note line use it, not today), and it never queues again
    (the vault going away mid-replay raises, and the record stays queued)."""

    day: _dt.date


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
    from echo_core.digests import sha256  # CPython's own: no OpenSSL for a cold hook

    return sha256(payload.encode("utf-8")).hexdigest()[:24]


def queue_capture_for_later(ctx: EchoContext, request: CaptureRequest,
                            why: str) -> Envelope[QueuedResult]:
    """Queue ``request`` in the outbox exactly as ``capture`` queues one when the vault is
    down (validated and redacted first; one record, replayed by ``flush`` and ``load``),
    for a caller that must not wait for the vault: a hook whose vault lock another
    process holds. ``why`` is said in the message. Errors: ``BackendUnavailable`` when
    there is no outbox to keep it in (nothing kept)."""
    return queue_capture(ctx, request, BackendUnavailable(why))


def queue_or_raise(ctx: EchoContext, op: str, args: dict[str, Any],
                   down: BackendUnavailable, *, op_id: str | None = None,
                   replay: Replay | None = None) -> Envelope[QueuedResult]:
    """Queue the write ``op(**args)`` because the vault is down; re-raise ``down`` when
    there is no outbox or the write is itself a ``replay`` (a replay never queues again).

    ``op_id``: the operation id the replay passes on (captures). An absent vault folder
    (``VaultMissing``) queues only when this machine saw a vault there (exit 78, not a
    vault, and nothing queued otherwise), and the queued envelope is then ``ok=False`` (exit 69):
    the write is safe in the outbox but a person has to bring the folder back."""
    queue = ctx.queue
    if queue is None or replay is not None:
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
        message = (f"{vault_gone_text(ctx)}; {op} kept in the outbox ({pending} waiting): "
                   f"run `echo-memory flush` once the folder is back ({down})")
    else:
        message = (f"vault unreachable ({down}); {op} queued in the outbox ({pending} "
                   "waiting) — `echo-memory flush` replays it when the vault is back")
    return Envelope(not missing, Action.QUEUED, message, QueuedResult(rid, op, pending, str(down)))


def capture_args(request: CaptureRequest) -> dict[str, Any]:
    """The queued form of a (validated) capture request: its fields as JSON values,
    without ``dry_run`` (a dry run never queues)."""
    return {k: (list(v) if isinstance(v, tuple) else v)
            for k, v in attrs.asdict(request, recurse=False).items() if k != "dry_run"}


def queue_capture(ctx: EchoContext, request: CaptureRequest, down: BackendUnavailable, *,
                  op_id: str | None = None,
                  replay: Replay | None = None) -> Envelope[QueuedResult]:
    """Queue ``request`` as one capture record, as ``capture`` does when it meets ``down``
    (see ``queue_or_raise`` for when it raises instead)."""
    from echo_core.ops.capture_request import validate_request

    args = capture_args(validate_request(request, ctx.manifest))
    return queue_or_raise(ctx, "capture", args, down, op_id=op_id, replay=replay)
