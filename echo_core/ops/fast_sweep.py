"""``sweep --fast`` (SPEC §5.1): the indexes made to agree with the vault, reading only
what changed.

One listing of the vault with each file's stat (``vault_scan.scan_tree``) is compared
with the manifest (``vault_manifest``): notes new, gone or with another size or mtime are
read, and so is today's verification shard (``crc32(path) % 7 == weekday``; every note
with ``all_shards``), which catches an edit that kept size and mtime. Changed notes are
re-indexed for recall and, in a kind's folder, become or update their entity; notes gone
leave both indexes. Entity entries whose note is gone, and notes in a kind folder that
have no entry, are synced too whatever the manifest says (index drift). Only indexes are
written, never a note: no ``--apply`` gate.

The first fast sweep of a vault (no manifest yet) rebuilds both indexes from one read of
every note and records the baseline. ``load`` runs a fast sweep when the last one is
older than ``ECHO_FAST_SWEEP_DAYS`` (default 7). On a backend with a change log it records
the change number it read before listing (``ops.change_numbers``): catch-ups go on from there.
"""

from __future__ import annotations

import datetime as _dt
import json
import time
import zlib
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.bulk_work import collector_paused
from echo_core.entities import JOURNAL_PATH, SNAPSHOT_PATH, file_signature
from echo_core.models import Envelope
from echo_core.ops.change_numbers import change_position, record_change
from echo_core.ops.vault_changes import (
    Changes,
    apply_stamps,
    baseline,
    entity_drift,
    manifest_of,
    scan_corpus,
    stamps_against,
)

if TYPE_CHECKING:
    from echo_core.context import EchoContext

SHARDS = 7
DEFAULT_SWEEP_DAYS = 7


@attrs.frozen
class FastSweepResult:
    """What a fast sweep found and did."""

    listed: int
    new: tuple[str, ...]
    changed: tuple[str, ...]
    gone: tuple[str, ...]
    touched: int
    verified: int
    entities_put: tuple[str, ...]
    entities_removed: tuple[str, ...]
    unreadable: tuple[str, ...]
    baseline: bool
    pending: bool
    seconds: float


def in_shard(path: str, weekday: int) -> bool:
    """Whether ``path`` is in the verification shard of ``weekday`` (0 = Monday)."""
    return zlib.crc32(path.encode("utf-8")) % SHARDS == weekday % SHARDS


@collector_paused()
def fast_sweep(ctx: EchoContext, *, all_shards: bool = False) -> Envelope[FastSweepResult]:
    """Run the fast sweep (module docstring) and report what it did."""
    start = time.perf_counter()
    storage = ctx.vault.storage
    seq = change_position(storage)  # read before the listing: later changes replay
    scan = scan_corpus(storage)
    stamps = scan.files
    manifest = manifest_of(ctx)
    at = ctx.now().isoformat(timespec="seconds")
    first = not manifest.has_baseline()
    if first:
        changes = baseline(ctx, stamps, scan.folders, at)
    else:
        current, recorded = stamps_against(manifest, stamps)
        weekday = ctx.today().weekday() % SHARDS
        crc = zlib.crc32
        verify = list(stamps) if all_shards else [
            p for p in stamps if crc(p.encode("utf-8")) % SHARDS == weekday]
        missing: set[str] = set()
        orphaned: set[str] = set()
        if manifest.get("entities_seen") != _store_signature(ctx):  # someone changed it
            missing, orphaned = entity_drift(ctx, stamps)
        kept = recorded.without(p for p in missing if p in recorded)  # read them again
        current.update({p: stamps[p] for p in missing})
        folders = {**scan.folders, **{f: None for f in manifest.folders() if f not in scan.folders}}
        changes = apply_stamps(ctx, current, kept, verify, folders, {"fast_sweep": at},
                               drop=sorted(orphaned - kept.keys()))
    if not changes.sync.entities_pending:
        manifest.set(entities_seen=_store_signature(ctx))
        if seq is not None:  # a change log: catch-ups go on from here
            record_change(manifest, seq, forward_only=False)
    seconds = time.perf_counter() - start
    return Envelope(True, Action.SWEPT, _message(changes, len(stamps), first, seconds),
                    _result(changes, len(stamps), first, seconds))


def _store_signature(ctx: EchoContext) -> str:
    """The entity store's files' sizes and mtimes: unchanged since the last sweep means
    nobody changed the index since it was made to agree with the vault (the drift check
    can be skipped)."""
    storage = ctx.vault.storage
    return json.dumps([file_signature(storage, SNAPSHOT_PATH), file_signature(storage, JOURNAL_PATH)])


def _result(changes: Changes, listed: int, first: bool, seconds: float) -> FastSweepResult:
    return FastSweepResult(
        listed=listed, new=changes.new, changed=changes.changed, gone=changes.gone,
        touched=changes.touched, verified=changes.verified,
        entities_put=changes.sync.entities_put, entities_removed=changes.sync.entities_removed,
        unreadable=changes.unreadable, baseline=first, pending=changes.sync.entities_pending,
        seconds=round(seconds, 3))


def _message(changes: Changes, listed: int, first: bool, seconds: float) -> str:
    if first:
        return (f"fast sweep: first run, rebuilt both indexes from {listed} notes "
                f"({len(changes.sync.entities_put)} entities added, "
                f"{len(changes.sync.entities_removed)} dropped) in {seconds:.2f} s")
    return (f"fast sweep: {listed} notes listed, {len(changes.new)} new, "
            f"{len(changes.changed)} changed, {len(changes.gone)} gone, {changes.verified} "
            f"verified by hash; entities +{len(changes.sync.entities_put)} "
            f"-{len(changes.sync.entities_removed)}; {seconds:.2f} s")


def render_fast_sweep(env: Envelope[FastSweepResult]) -> str:
    """The summary, then each note synced."""
    lines = [env.message]
    data = env.data
    for label, paths in (("new", data.new), ("changed", data.changed), ("gone", data.gone)):
        if not data.baseline:
            lines.extend(f"  {label}: {p}" for p in paths)
    lines.extend(f"  unreadable (left as it was): {p}" for p in data.unreadable)
    if data.pending:
        lines.append("  the entity index was busy (vault lock held): the next sweep "
                     "finishes the entity part")
    return "\n".join(lines)


def record_sweep(ctx: EchoContext, kind: str) -> None:
    """Record that a sweep of ``kind`` (``"fast"`` or ``"full"``) ran now."""
    manifest_of(ctx).set(**{f"{kind}_sweep": ctx.now().isoformat(timespec="seconds")})


def last_sweeps(ctx: EchoContext) -> dict[str, _dt.datetime | None]:
    """When the last fast and full sweeps ran (None: never on this machine)."""
    manifest = manifest_of(ctx)
    found: dict[str, _dt.datetime | None] = {}
    for kind in ("fast", "full"):
        raw = manifest.get(f"{kind}_sweep")
        try:
            found[kind] = _dt.datetime.fromisoformat(raw) if raw else None
        except ValueError:
            found[kind] = None
    return found


def sweep_due(ctx: EchoContext) -> bool:
    """Whether ``load`` should run a fast sweep: none recorded, or the last one older than
    ``ECHO_FAST_SWEEP_DAYS`` days."""
    last = last_sweeps(ctx)["fast"]
    if last is None:
        return True
    try:
        days = float(ctx.env.get("ECHO_FAST_SWEEP_DAYS", DEFAULT_SWEEP_DAYS))
    except ValueError:
        days = DEFAULT_SWEEP_DAYS
    now = ctx.now()
    if last.tzinfo is None and now.tzinfo is not None:
        last = last.replace(tzinfo=now.tzinfo)
    return (now - last) >= _dt.timedelta(days=days)
