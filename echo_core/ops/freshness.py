"""A short-lived process sees hand edits before it answers (SPEC §5.1, live freshness).

``freshen(ctx)`` runs before an operation that reads the indexes (recall, resolve,
capture, link, load and the hooks that call them). It compares the vault with the
manifest cheaply, bounded by a time budget:

1. every recorded folder's mtime: a folder whose mtime moved gained, lost or renamed an
   entry, so only its own entries are listed (a new sub-folder is walked whole, a folder
   gone drops every note under it) — this finds new, deleted and atomically saved notes
   at any vault size;
2. then a rotating window of recorded notes is stat-ed, from where the last process
   stopped, until the budget is spent (a small vault is covered whole on every call; a
   100k-note vault over a few calls) — this finds notes edited in place, which change
   no folder.

What it finds is synced to both indexes (``vault_changes.apply_stamps``).

The full pass (``full_pass``) is the fast sweep when one is due (``ECHO_FAST_SWEEP_DAYS``),
else every note stat-ed; it is what a session start owes:

* ``echo-memory load`` runs it before it answers: every change made before the load
  started is in both indexes when it answers.
* The SessionStart hook answers without it (``DEFER_ATTR``, ``OwedPass``): before its answer
  only step 1 runs (new, deleted and renamed notes are in the indexes when it answers;
  a vault with no baseline yet, or more than ``SESSION_SYNC_LIMIT`` notes to sync, leaves
  even that to the full pass), and the full pass runs once the answer is written
  (``echo_core.ops.session_pass``: a detached process by default). So every change made
  before a session start is in both indexes once that start's full pass has ended.
  A pass that dies midway (killed, crashed) leaves nothing torn: a manifest row is
  written only after both indexes took its change, so the next pass finds the rest.

A backend with a change log (``ops.change_feed``: the PostgreSQL one) is not scanned:
every check, the full pass included, asks for the changes made since this state dir last
caught up and syncs those notes (one query when nothing changed); ``load`` still runs
the fast sweep when one is due. Any other backend without folder stamps (a remote one,
where each stat is a round trip) gets no per-operation check and no unbounded stat pass: the fast sweep when due, the server's
hourly sweep and ``sweep --fast`` keep it current. A vault with no manifest yet gets its
baseline (the first fast sweep). ``ECHO_FRESHNESS=off`` turns every check off, the full
pass included. A failure here never fails the operation: it is logged and the operation
answers from the indexes as they are.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import attrs

from echo_core.lazy_log import lazy_logger
from echo_core.ops.change_feed import catch_up, has_change_log
from echo_core.ops.index_sync import IndexSync
from echo_core.ops.vault_changes import (
    Changes,
    Stamp,
    apply_stamps,
    manifest_of,
    scan_corpus,
    stamps_against,
    tracked,
    untracked_folder,
)
from echo_core.protocols import BackendUnavailable
from echo_core.vault_scan import (
    file_stamps,
    folder_stamps,
    has_folder_stamps,
    scan_folder,
    scan_tree_under,
)

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.vault_manifest import VaultManifest

log = lazy_logger("echo_memory")

#: Seconds a bounded check spends stat-ing the rotating window (the folder pass is
#: always done whole: it is what finds new and deleted notes). 5 ms covers a 1k-note
#: vault whole on every call; at 100k notes the window is a slice either way, and every
#: session start's full pass stats every note, so a longer window would only add to the
#: cost of each cold command (12 ms before: 17 ms of a 100k-note recall).
DEFAULT_BUDGET = 0.005
#: Notes stat-ed between two looks at the clock (a cold ``stat`` can cost ~70 us: 256 at
#: a time overshot a 5 ms budget threefold). The first round runs whatever the time.
WINDOW = 32
#: How long a bounded check waits for the vault lock to update the entity index before
#: leaving that part to the next check (a capture in another process holds it briefly).
QUICK_LOCK_TIMEOUT = 0.5
#: A session start syncs at most this many notes before it answers; more (a large pull
#: or copy) are left to the full pass it runs after answering, and so is the entity part
#: when the vault lock stays taken longer than ``SESSION_LOCK_TIMEOUT`` seconds.
SESSION_SYNC_LIMIT = 64
SESSION_LOCK_TIMEOUT = 0.1


#: The attribute a caller sets on a context to have ``load`` (``fresh="full"``) run only
#: the folder pass and owe the full pass (the SessionStart hook: ``OwedPass``).
DEFER_ATTR = "defer_full_pass"
#: The attribute holding the ``OwedPass`` then (read by ``getattr``, as ``live_watched``).
OWED_ATTR = "owed_full_pass"


@attrs.define
class OwedPass:
    """The full pass a session start answered without: the context to run it for, and
    when it was owed (``time.time_ns`` before the session start looked at the vault).
    ``echo_core.settle_owed_pass`` runs it."""

    ctx: EchoContext
    requested_ns: int


def freshen_for(ctx: EchoContext, mode: str) -> Changes | None:
    """What a surface runs before an operation declared ``fresh=mode``: ``"quick"`` the
    bounded check; ``"full"`` (load) the full pass (``full_pass``), or, when the context
    says ``defer_full_pass``, the folder pass alone, leaving an ``OwedPass`` in its
    ``owed_full_pass`` for the caller to settle once it has answered. Nothing when
    ``ECHO_FRESHNESS=off`` or a watcher keeps this process's indexes current
    (``ctx.live_watched``)."""
    if _off(ctx) or getattr(ctx, "live_watched", False):
        return None
    try:
        local = has_folder_stamps(ctx.vault.storage)
        numbered = not local and has_change_log(ctx.vault.storage)
    except Exception:  # noqa: BLE001 - the operation reports a backend it cannot open
        return None
    if numbered:  # a shared vault with a change log: catch up by change number
        found = _caught_up(ctx, mode)
        if mode != "full" or found is None or not _sweep_due(ctx):
            return found
        if getattr(ctx, DEFER_ATTR, False):  # the due fast sweep after the answer
            setattr(ctx, OWED_ATTR, OwedPass(ctx, time.time_ns()))
            return found
        return full_pass(ctx)
    if mode == "full":
        if not getattr(ctx, DEFER_ATTR, False):
            return full_pass(ctx)
        if local or _sweep_due(ctx):  # a remote backend's full pass is its fast sweep
            setattr(ctx, OWED_ATTR, OwedPass(ctx, time.time_ns()))
        return freshen(ctx, 0.0, max_sync=SESSION_SYNC_LIMIT) if local else None
    # a remote backend stats one file per round trip: it has no cheap check, and relies
    # on load's fast sweep and the server's watcher-less hourly sweep instead
    if not local or _checked_recently(ctx):
        return None
    return freshen(ctx, _budget(ctx))


def _caught_up(ctx: EchoContext, mode: str) -> Changes | None:
    """``change_feed.catch_up`` (throttled in a server as the bounded check is; the
    entity part waits ``QUICK_LOCK_TIMEOUT`` for the vault lock), or None when it could
    not run (logged, as ``freshen``)."""
    if mode != "full" and _checked_recently(ctx):
        return None
    try:
        return catch_up(ctx, lock_timeout=QUICK_LOCK_TIMEOUT)
    except BackendUnavailable:
        return None  # the operation meets the vault's absence itself
    except Exception as exc:
        log.warning("could not catch up with changes made by other machines (%s); "
                    "answering from the indexes as they are", exc)
        log.debug("catch-up failure", exc_info=True)
        return None


def freshness_off(ctx: EchoContext) -> bool:
    """Whether ``ECHO_FRESHNESS=off`` asks every read to answer from the indexes as they
    are (no catching up with hand edits, no healing an entry found stale)."""
    return ctx.env.get("ECHO_FRESHNESS", "").strip().lower() in ("off", "0", "no", "false")


_off = freshness_off


def _sweep_due(ctx: EchoContext) -> bool:
    from echo_core.ops.fast_sweep import sweep_due

    try:
        return sweep_due(ctx)
    except Exception:  # noqa: BLE001 - the pass will say what is wrong
        return True


def full_pass(ctx: EchoContext) -> Changes | None:
    """The fast sweep when one is due (SPEC §5.1), else every note stat-ed (a backend
    without folder stamps: nothing). What it did (a sweep: an empty ``Changes``; its
    ``sync.entities_pending`` set when the entity index was busy and some notes are
    left to the next pass), or None when it could not run (logged)."""
    try:
        from echo_core.ops.fast_sweep import fast_sweep, sweep_due

        if sweep_due(ctx):
            done = fast_sweep(ctx).data
            return Changes(sync=IndexSync(entities_pending=done.pending))
    except BackendUnavailable:
        return None
    except Exception as exc:
        log.warning("the fast sweep at session start failed (%s); run `echo-memory sweep "
                    "--fast` to see why", exc)
        log.debug("fast sweep failure", exc_info=True)
        return None
    try:
        local = has_folder_stamps(ctx.vault.storage)
    except Exception:  # noqa: BLE001 - the operation reports a backend it cannot open
        return None
    return freshen(ctx, None) if local else Changes()


#: state dir -> when this process last ran a bounded check of it (``time.monotonic``)
_LAST_QUICK: dict[str, float] = {}
#: A server without a watcher (``ECHO_WATCH=off``, or a backend it cannot watch) checks at
#: most this often, so a burst of calls pays for one check, not one each.
QUICK_EVERY = 1.0


def _checked_recently(ctx: EchoContext) -> bool:
    from echo_core.operations.spelling import current_surface

    if current_surface() != "mcp":  # a CLI process or a hook checks every time
        return False
    key = str(ctx.state_dir)
    now = time.monotonic()
    last = _LAST_QUICK.get(key)
    if last is not None and now - last < QUICK_EVERY:
        return True
    _LAST_QUICK[key] = now
    return False


def _budget(ctx: EchoContext) -> float:
    """``ECHO_FRESH_BUDGET_MS`` (milliseconds for the rotating window), else the default."""
    raw = ctx.env.get("ECHO_FRESH_BUDGET_MS", "").strip()
    try:
        return max(0.0, float(raw) / 1000) if raw else DEFAULT_BUDGET
    except ValueError:
        return DEFAULT_BUDGET


def freshen(ctx: EchoContext, budget: float | None = DEFAULT_BUDGET,
            max_sync: int | None = None) -> Changes | None:
    """The bounded check of the module docstring (``budget=None``: every note stat-ed);
    None when it could not run (logged). ``max_sync`` (a session start, whose full pass
    follows): a bounded check that finds more notes than that to sync, or a vault with no
    baseline yet, syncs nothing, and the vault lock is waited for only
    ``SESSION_LOCK_TIMEOUT``."""
    try:
        return _freshen(ctx, budget, max_sync)
    except BackendUnavailable:
        return None  # the operation meets the vault's absence itself
    except Exception as exc:
        log.warning("could not check for notes changed outside echo-memory (%s); answering "
                    "from the indexes as they are", exc)
        log.debug("freshness check failure", exc_info=True)
        return None


def _freshen(ctx: EchoContext, budget: float | None, max_sync: int | None = None) -> Changes:
    manifest = manifest_of(ctx)
    if not manifest.has_baseline():
        if max_sync is not None:
            return Changes()
        from echo_core.ops.fast_sweep import fast_sweep

        fast_sweep(ctx)
        return Changes()
    storage = ctx.vault.storage
    if budget is None:
        scan = scan_corpus(storage)
        stamps, recorded = stamps_against(manifest, scan.files)
        folders: dict[str, int | None] = dict(scan.folders)
        folders.update({f: None for f in manifest.folders() if f not in scan.folders})
        return apply_stamps(ctx, stamps, recorded, folders=folders)
    deadline = time.perf_counter() + budget
    stamps, folders = _folder_pass(ctx, manifest) if has_folder_stamps(storage) else ({}, {})
    cursor = _window_pass(ctx, manifest, stamps, deadline) if budget > 0 else None
    rows = manifest.rows(stamps)
    moved = sum(1 for p in stamps if not _same(stamps[p], rows.get(p)))
    if max_sync is not None and moved > max_sync:
        return Changes()  # too many for now: the caller's full pass syncs them
    if cursor is not None:
        manifest.set_cursor(cursor)  # where to go on next time
    if not folders and not moved:
        return Changes()
    return apply_stamps(ctx, stamps, rows, folders=folders, lock_timeout=(
        QUICK_LOCK_TIMEOUT if max_sync is None else SESSION_LOCK_TIMEOUT))


def _same(stamp: Stamp | None, row: tuple[int, int, str] | None) -> bool:
    if stamp is None or row is None:
        return stamp is None and row is None
    return (stamp[0], stamp[1]) == (row[0], row[1]) and bool(row[2])


def _folder_pass(ctx: EchoContext, manifest: VaultManifest,
                 ) -> tuple[dict[str, Stamp | None], dict[str, int | None]]:
    """Stamps of the notes in folders whose mtime moved, and those folders' new stamps."""
    storage = ctx.vault.storage
    recorded = manifest.folders()
    # an untracked folder an older pass recorded is forgotten, not stat-ed
    folders: dict[str, int | None] = {f: None for f in recorded if untracked_folder(f)}
    now = folder_stamps(storage, sorted(f for f in recorded if f not in folders))
    stamps: dict[str, Stamp | None] = {}
    for folder, mtime in now.items():
        if mtime == recorded[folder]:
            continue
        if mtime is None:  # gone, with everything under it
            folders.update({f: None for f in recorded if _inside(f, folder)})
            stamps.update(dict.fromkeys(manifest.under(folder)))
            continue
        listing = scan_folder(storage, folder)
        folders.update({f: m for f, m in listing.folders.items() if not untracked_folder(f)})
        for path, stamp in listing.files.items():
            if tracked(path):
                stamps[path] = stamp
        for path in manifest.directly_in(folder):
            if path not in listing.files:
                stamps[path] = None
        for sub in listing.folders:
            if sub != folder and sub not in recorded and not untracked_folder(sub):  # new
                deep = scan_tree_under(storage, sub, ".md")
                folders.update({f: m for f, m in deep.folders.items()
                                if not untracked_folder(f)})
                stamps.update({p: s for p, s in deep.files.items() if tracked(p)})
    return stamps, folders


def _inside(path: str, folder: str) -> bool:
    return path == folder or not folder or path.startswith(folder + "/")


def _window_pass(ctx: EchoContext, manifest: VaultManifest,
                 stamps: dict[str, Stamp | None], deadline: float) -> int:
    """Stat recorded notes from the saved cursor, ``WINDOW`` at a time, until ``deadline``
    (or all of them), the first ``WINDOW`` whatever the time (a process descheduled before
    it starts still looks at some, and a vault of up to ``WINDOW`` notes is always
    covered whole); add those whose stamp moved to ``stamps``; the cursor to save."""
    storage = ctx.vault.storage
    cursor = manifest.cursor()
    start_at, wrapped = cursor, False
    seen = 0
    while seen < WINDOW or time.perf_counter() < deadline:
        rows = manifest.window(cursor, WINDOW)
        if wrapped:
            rows = [r for r in rows if r[0] <= start_at]
        if not rows:
            if wrapped or start_at == 0:
                break
            cursor, wrapped = 0, True
            continue
        now = file_stamps(storage, [r[1] for r in rows])
        seen += len(rows)
        for _id, path, size, mtime in rows:
            stamp = now.get(path)
            if path not in stamps and (stamp is None or (stamp[0], stamp[1]) != (size, mtime)):
                stamps[path] = stamp
        cursor = rows[-1][0]
        if wrapped and cursor >= start_at:
            break
    return cursor
