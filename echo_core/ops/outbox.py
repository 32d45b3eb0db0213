"""Offline durability (SPEC §5.4): replay with ``flush`` the writes queued while the
vault was unreachable (``ops.outbox_queue`` queues them).

A capture queues as ONE semantic record (all its arguments + the day it was made) and
replays through capture, so routing and the gate re-run against the index as it is then;
raw writes (append, put, fm) queue too. A gate stop on replay flags the record
``needs_attention`` and does not block later records; every flush tries it again, and
flags it again only when the reason changed (no state line per flush). A person settles
it (captures it again with ``--merge-into``/``--force``, or decides against it) and
dismisses it: ``flush(dismiss=[id])`` marks it done without replaying it, the reason kept
in its state line. Identical offline writes share an idempotency key and queue once.

Exactly once: a queued capture carries its operation id (``op_id``); the replay passes it
to capture, which skips an operation the entity index has already committed — one that
landed in part before the vault went away (finished by ``ops.write_intent``), or one a
killed flush replayed without marking it done. Raw writes are idempotent by themselves.

``flush`` holds ``<state_dir>/outbox.flush.lock`` (an ``flock``: released by the kernel
when its holder dies), so concurrent flushes run one after another, and it replays only
into a vault that has its marker. Nothing is queued for an absent folder this machine
never saw as a vault (``echo_core.vault_seen``).

A write that does not land goes on waiting without stopping the flush: the vault failed
it while still answering (a flaky server's 5xx on one note), or a person was editing its
note. Later writes that may touch the same notes are held back until the next flush, so
writes to one note land in their order; writes to other notes go on (``ops.outbox_order``
says which notes a write touches, and why a capture of an entity holds back everything
after it). When the vault does not answer at all any more (the ``ping`` after a failed
write fails: connection refused, folder gone) or ``FAILURES_IN_A_ROW`` writes in a row
failed, the flush stops there and everything after waits.

Stray outboxes: a storage may name state dirs that older versions kept for its vault
under another identity (``storage.former_identities``, and ``storage.same_vault`` for the
identity a state dir recorded: one per spelling of a PostgreSQL URL, before
``echo_core.pg_identity``). ``flush`` first moves their waiting records into this
vault's outbox (after those already there; each keeps its op id, and one flagged
``needs_attention`` stays flagged) and marks them done there, so none is lost and none
lands twice; a stray whose own flush lock is held is left for the next flush.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.actions import Action
from echo_core.config import state_dir_for
from echo_core.errors import (
    EchoError,
    EditedMeanwhile,
    ExitCode,
    LockHeldError,
    not_found,
    usage_error,
)
from echo_core.models import CaptureRequest, Envelope
from echo_core.ops.outbox_order import HeldNotes, notes_written
from echo_core.ops.outbox_queue import Replay
from echo_core.protocols import BackendUnavailable
from echo_core.vault_seen import require_initialised, seen_identity

if TYPE_CHECKING:
    from echo_core.context import EchoContext

FLUSH_LOCK = "outbox.flush.lock"
#: How long ``flush`` waits for another process's flush before giving up (seconds).
FLUSH_WAIT = 120.0
#: Writes the vault fails in a row (while answering its ``ping``) before ``flush`` stops.
FAILURES_IN_A_ROW = 3


def _replay_capture(ctx: EchoContext, args: dict[str, Any], op_id: str,
                    replay: Replay) -> Envelope[object]:
    from echo_core.ops.capture import capture

    fields: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v) for k, v in args.items()}
    return capture(ctx, CaptureRequest(**fields), op_id=op_id, replay=replay)


def _replay_append(ctx: EchoContext, args: dict[str, Any], op_id: str,
                   replay: Replay) -> Envelope[object]:
    from echo_core.ops.notes_io import append_line

    return append_line(ctx, args["path"], args["line"], replay=replay)


def _replay_put(ctx: EchoContext, args: dict[str, Any], op_id: str,
                replay: Replay) -> Envelope[object]:
    from echo_core.ops.notes_io import put_note

    return put_note(ctx, args["path"], args["text"], replay=replay)


def _replay_fm(ctx: EchoContext, args: dict[str, Any], op_id: str,
               replay: Replay) -> Envelope[object]:
    from echo_core.ops.notes_io import set_frontmatter

    return set_frontmatter(ctx, args["path"], args["key"], args["value"], replay=replay)


#: How each queued operation is replayed: ``(ctx, args, op_id, replay) -> envelope``.
Replayer = Callable[["EchoContext", dict[str, Any], str, Replay], Envelope[object]]
REPLAYERS: dict[str, Replayer] = {
    "capture": _replay_capture, "append": _replay_append, "put": _replay_put,
    "fm": _replay_fm,
}


@attrs.frozen
class FlushItem:
    """What happened to one queued record."""

    id: str
    op: str
    outcome: str  # synced | needs_attention | pending | dismissed
    detail: str = ""
    path: str | None = None
    #: pending without being tried: an earlier write to its notes did not land, or the
    #: vault is unreachable (``pending`` and not ``held_back``: tried, and it failed)
    held_back: bool = False


@attrs.frozen
class FlushResult:
    """Synced, still pending (``failed`` when tried + ``held_back`` when not), needing
    attention and (``flush --dismiss``) dismissed."""

    synced: int
    pending: int
    needs_attention: int
    items: tuple[FlushItem, ...] = ()
    reachable: bool = True
    dismissed: int = 0
    failed: int = 0
    held_back: int = 0


class FlushBusy(LockHeldError):
    """Another process holds the flush lock (exit 75)."""


@contextmanager
def flush_lock(ctx: EchoContext, wait: float) -> Iterator[None]:
    """Hold ``<state_dir>/outbox.flush.lock``; wait up to ``wait`` seconds for another
    flush to finish (``FlushBusy`` after that; ``wait=0`` tries once)."""
    with _flush_lock_of(ctx.state_dir, wait):
        yield


@contextmanager
def _flush_lock_of(state_dir: Path, wait: float) -> Iterator[None]:
    """``flush_lock`` of the state dir ``state_dir``."""
    fd = os.open(state_dir / FLUSH_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
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


def flush(ctx: EchoContext, *, wait: float = FLUSH_WAIT,
          dismiss: Sequence[str] = ()) -> Envelope[FlushResult]:
    """Replay every pending record, oldest first, exactly once (see module docstring).
    Records already flagged ``needs_attention`` are retried too (they may pass now).
    A record that does not land stays queued and holds back the later ones that may
    touch its notes; the others go on. Stops at once when the vault is down again (or
    ``FAILURES_IN_A_ROW`` writes failed in a row); everything not replayed stays queued.

    ``dismiss``: ids of records flagged ``needs_attention`` to mark done first, without
    replaying them (their state line says so); the rest then replays as usual. Every id is
    checked before any is dismissed: 44 (not found) for an id no waiting record has, 2
    (usage) for a record that is not flagged. Errors: 75 (``FlushBusy``) when another
    flush holds the lock beyond ``wait``."""
    queue = ctx.queue
    if queue is None:
        if dismiss:
            raise not_found(f"no outbox record {dismiss[0]!r}: no outbox plugin is "
                            "installed, so nothing is ever queued")
        return Envelope(True, Action.FLUSHED, "no outbox plugin installed; nothing to flush",
                        FlushResult(0, 0, 0))
    strays = _stray_outboxes(ctx)
    if not dismiss and not strays and not queue.pending():
        return _flush_result([], reachable=True, note="")
    with flush_lock(ctx, wait):
        _adopt(ctx, queue, strays)
        records = list(queue.pending())  # re-read: a flush that held the lock replayed some
        items = _dismiss(ctx, queue, records, dismiss)
        dismissed = {item.id for item in items}
        records = [record for record in records if str(record["id"]) not in dismissed]
        reachable, note = _vault_ready(ctx) if records else (True, "")
        replayed, stop = _replay_in_order(ctx, queue, records,
                                          None if reachable else _Stop("the vault is unreachable"))
        items += replayed
        if stop is not None and reachable:
            reachable, note = not stop.down, stop.note
    return _flush_result(items, reachable=reachable, note=note)


@attrs.frozen
class _Stop:
    """Why a flush stops trying records: ``why`` for the records held back, ``note`` for
    the flush's message, ``down``: the vault stopped answering."""

    why: str
    note: str = ""
    down: bool = True


def _replay_in_order(ctx: EchoContext, queue: Any, records: Sequence[Mapping[str, Any]],
                     stop: _Stop | None) -> tuple[list[FlushItem], _Stop | None]:
    """Replay ``records`` in order, holding back each that must wait for one that did
    not land (module docstring), and every one once the flush stops (``stop`` given: it
    stopped before the first). Returns the items and why the flush stopped, if it did."""
    items: list[FlushItem] = []
    held = HeldNotes()
    failures = 0
    for record in records:
        rid, op, notes = str(record["id"]), str(record.get("op")), notes_written(record)
        blocker = held.blocker(notes)
        if stop is not None or blocker is not None:
            held.hold(rid, notes)
            why = stop.why if stop is not None else (
                f"{blocker}, queued before it, may write the same note and did not land; "
                "it replays after that one")
            items.append(FlushItem(rid, op, "pending", f"held back: {why}", held_back=True))
            continue
        item = _replay(ctx, queue, record)
        if item.outcome == "pending":
            held.hold(rid, notes)
        failures = failures + 1 if item.detail.startswith(_VAULT_FAILED) else 0
        if failures:
            stop = _stop_after_failure(ctx, failures)
            if stop is not None and stop.down:
                item = attrs.evolve(item, detail=_WENT_AWAY)
        items.append(item)
    return items, stop


def _stop_after_failure(ctx: EchoContext, failures: int) -> _Stop | None:
    """Whether the flush stops after the vault failed a write, ``failures`` in a row:
    when its ``ping`` fails too (the vault is down, not one request: no more requests
    to a server that refuses them) or ``FAILURES_IN_A_ROW`` failed; else None."""
    try:
        ctx.vault.storage.ping()
    except BackendUnavailable:
        return _Stop("the vault is unreachable")
    except EchoError as error:
        return _Stop("the vault is unreachable", f"; not replayed: {error.message}")
    if failures >= FAILURES_IN_A_ROW:
        why = f"the vault failed {failures} writes in a row, so the flush stopped there"
        return _Stop(why, f"; {why}", down=False)
    return None


def replay_waiting(ctx: EchoContext) -> None:
    """Replay the outbox now if it holds writes (``flush``, not waiting for another
    process's flush), for a write that must land after those queued before it (the
    PreCompact checkpoint). Never raises: whatever does not land stays queued for
    ``load`` or ``echo-memory flush``."""
    try:
        queue = ctx.queue
        if queue is not None and queue.pending():
            flush(ctx, wait=0)
    except Exception:  # noqa: BLE001 - the caller's own write goes ahead regardless
        return


def _stray_outboxes(ctx: EchoContext) -> list[tuple[Path, Any]]:
    """``(state dir, queue)`` of each stray outbox of this vault holding records (module
    docstring): in the state dir of a ``storage.former_identities`` entry, or one whose
    recorded identity ``storage.same_vault`` owns. None for a storage offering neither.
    Never raises (a stray that cannot be read is left for the next flush)."""
    try:
        storage = ctx.storage
        formers = tuple(getattr(storage, "former_identities", ()))
        same = getattr(storage, "same_vault", None)
        if not formers and not callable(same):
            return []
        own = ctx.state_dir
        folders = [own.parent / state_dir_for("", identity).name for identity in formers]
        if callable(same):
            for child in sorted(own.parent.iterdir()):
                recorded = seen_identity(child) if child != own else None
                if recorded is not None and same(recorded):
                    folders.append(child)
        factory = ctx.host.collect("register_queues")[str(ctx.config.raw.get("queue",
                                                                             "outbox"))]
        strays = [(folder, factory(str(folder))) for folder in dict.fromkeys(folders)
                  if folder != own and folder.is_dir()]
        return [(folder, stray) for folder, stray in strays if stray.pending()]
    except Exception:  # noqa: BLE001 - this vault's own outbox is flushed regardless
        return []


def _adopt(ctx: EchoContext, queue: Any, strays: list[tuple[Path, Any]]) -> None:
    """Move the waiting records of ``strays`` into ``queue`` (module docstring), under
    each stray's flush lock (a stray another process flushes now is skipped). A record
    moved but not yet marked done there (a crash between) is moved again: its copy
    shares its idempotency key, and its op id makes the replay land once regardless."""
    where = ctx.storage.identity
    for folder, stray in strays:
        try:
            with _flush_lock_of(folder, 0):
                waiting = {str(record["id"]) for record in queue.pending()}
                for record in stray.pending():
                    rid = str(record["id"])
                    fields = {k: v for k, v in record.items()
                              if k not in ("id", "state", "detail")}
                    fields["op_id"] = str(record.get("op_id") or f"outbox-{rid}")
                    moved = queue.put(fields)
                    if record.get("state") == "needs_attention" and moved not in waiting:
                        queue.mark(moved, "needs_attention", str(record.get("detail", "")))
                    waiting.add(moved)
                    stray.mark(rid, "done", f"moved to the outbox of {where}")
        except FlushBusy:
            continue


def _dismiss(ctx: EchoContext, queue: Any, records: list[Mapping[str, Any]],
             ids: Sequence[str]) -> list[FlushItem]:
    """Mark the records ``ids`` (each flagged ``needs_attention``) done without replaying
    them; the state line keeps when, how and the reason they needed attention. Nothing is
    marked unless every id is one (see ``flush``)."""
    by_id = {str(record["id"]): record for record in records}
    wanted = list(dict.fromkeys(ids))
    for rid in wanted:
        record = by_id.get(rid)
        if record is None:
            raise not_found(f"no outbox record {rid!r} is waiting (synced or dismissed "
                            "already?); `echo-memory flush` lists those that need "
                            "attention with their ids. Nothing was dismissed")
        if record.get("state") != "needs_attention":
            raise usage_error(f"outbox record {rid} does not need attention: it waits for "
                              "the vault, and `echo-memory flush` replays it once the vault "
                              "is reachable. Only a record flagged needs attention can be "
                              "dismissed; nothing was dismissed")
    stamp = ctx.now().isoformat(timespec="seconds")
    items: list[FlushItem] = []
    for rid in wanted:
        record = by_id[rid]
        detail = (f"dismissed {stamp} by `echo-memory flush --dismiss`, not replayed; it "
                  f"needed attention: {record.get('detail', '')}")
        queue.mark(rid, "done", detail)
        items.append(FlushItem(rid, str(record.get("op")), "dismissed", detail))
    return items


_WENT_AWAY = "vault went away during the flush"
#: The detail of a record whose replay met ``BackendUnavailable`` (it stays queued).
_VAULT_FAILED = "not replayed: the vault failed it"


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
        return _flag(queue, record, f"unknown operation {op!r}")
    # the write keeps the day it was made (its dates and daily-note line), passed along
    # explicitly: nothing about ``ctx`` changes while it replays
    made = Replay(_dt.date.fromisoformat(str(record.get("day") or ctx.today().isoformat())))
    try:
        # a record queued without an op id (an older version's) replays under one derived
        # from its record id, so a second replay of it is recognised all the same
        op_id = str(record.get("op_id") or f"outbox-{rid}")
        envelope = replay(ctx, dict(record.get("args") or {}), op_id, made)
    except BackendUnavailable as down:  # the flush asks whether the vault is still there
        return FlushItem(rid, op, "pending", f"{_VAULT_FAILED} ({down})")
    except EditedMeanwhile as edited:  # a person kept editing a note it writes: try later
        return FlushItem(rid, op, "pending", f"not replayed: {edited.message}")
    except EchoError as error:
        return _flag(queue, record, f"{error.code_name}: {error.message}")
    path = getattr(envelope.data, "path", None)
    if envelope.action in (Action.DUPLICATE_GATE, Action.CONTRADICTION):
        return _flag(queue, record, envelope.message, path)
    queue.mark(rid, "done", str(envelope.action))
    return FlushItem(rid, op, "synced", str(envelope.action), path)


def _flag(queue: Any, record: Any, detail: str, path: str | None = None) -> FlushItem:
    """Flag ``record`` ``needs_attention`` for ``detail``; a record flagged already for
    the same reason is left as it is (its state line is written once, not per flush)."""
    rid, op = str(record["id"]), str(record.get("op"))
    if record.get("state") != "needs_attention" or str(record.get("detail", "")) != detail:
        queue.mark(rid, "needs_attention", detail)
    return FlushItem(rid, op, "needs_attention", detail, path)


def _flush_result(items: list[FlushItem], *, reachable: bool, note: str) -> Envelope[FlushResult]:
    """The envelope of a flush: its counts, then why it stopped (``note``) if it did."""
    synced = sum(1 for i in items if i.outcome == "synced")
    attention = sum(1 for i in items if i.outcome == "needs_attention")
    pending = sum(1 for i in items if i.outcome == "pending")
    held_back = sum(1 for i in items if i.outcome == "pending" and i.held_back)
    dismissed = sum(1 for i in items if i.outcome == "dismissed")
    message = f"{synced} synced, {pending} pending"
    if pending:
        message += f" ({pending - held_back} failed, {held_back} held back)"
    message += f", {attention} need attention"
    if dismissed:
        message += f", {dismissed} dismissed"
    if note or not reachable:
        message += note or " (vault unreachable)"
    return Envelope(True, Action.FLUSHED, message,
                    FlushResult(synced, pending, attention, tuple(items), reachable, dismissed,
                                failed=pending - held_back, held_back=held_back))
