"""``heat``: which notes the policy would promote to, or demote from, always-load.

Input: recall hits per note in the state dir (``ops.hit_counts``), the notes whose
frontmatter says ``always_load: true`` (every note's frontmatter read once;
``ops.always_load``). The policy, in numbers:

* the window is the last ``WINDOW_DAYS`` (30) days, today included;
* promote: a note not always-loaded, with at least ``PROMOTE_MIN_HITS`` (5) recall hits
  in the window, status not archived / superseded / expired, most hits first (then the
  latest hit, then the path), while the always-loaded notes stay at most
  ``MAX_ALWAYS_LOAD`` (5) and their texts as the brief shows them, with the block's
  heading, fit 1/``digest.ALWAYS_LOAD_SHARE`` of the brief budget (``ECHO_LOAD_BUDGET``);
  a note the brief would cut (longer than ``digest.ALWAYS_LOAD_NOTE_CHARS``: a
  multi-megabyte note, say) or too long for what is left of the share is skipped,
  its reason in ``skipped``, and never marked;
* demote: an always-loaded note with no recall hit in the window, known as
  always-loaded for at least ``WINDOW_DAYS`` (so a fresh promotion is not undone), or
  whose status is archived / superseded / expired. An always-loaded note is in every
  brief, so it is recalled less: a demotion is a proposal to review.

Without ``apply`` nothing is written. ``apply`` sets ``always_load: true`` on each
promoted note and removes the key from each demoted one (one frontmatter line each,
under the vault lock, the prior text kept in the note history), then updates the list
of always-loaded notes in the state dir. A second ``apply`` finds nothing to do.

A note that cannot be read (not UTF-8) is left out of the policy, with a warning naming
it, as ``lint`` and ``sweep`` do (``index_sync.read_current``).
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.errors import EchoError
from echo_core.frontmatter import parse_frontmatter, remove_frontmatter_key, set_frontmatter_key
from echo_core.models import Envelope
from echo_core.operations.spelling import spell
from echo_core.ops.always_load import (
    BATCH,
    KEY,
    always_load_item,
    save_registry,
    text_is_always_load,
)
from echo_core.ops.digest import ALWAYS_LOAD_NOTE_CHARS, ALWAYS_LOAD_SHARE, TRUNCATED
from echo_core.ops.hit_counts import NoteHits, compact_hits, hits_since
from echo_core.ops.index_sync import read_current
from echo_core.ops.load import load_budget

if TYPE_CHECKING:
    from echo_core.context import EchoContext

WINDOW_DAYS = 30
PROMOTE_MIN_HITS = 5
MAX_ALWAYS_LOAD = 5
LOCK_TIMEOUT = 30.0
_SPENT = ("archived", "superseded", "expired")
#: The heading of the brief's always-load block (``digest._always_load_block``): it
#: counts against the block's share too (each note adds its text and a newline).
BLOCK_HEADING = "## Always loaded"


@attrs.frozen
class HeatChange:
    """One note to promote or demote: its hits in the window, its last hit ("" none)."""

    path: str
    hits: int
    last_hit: str
    reason: str


@attrs.frozen
class HeatResult:
    """What the policy proposes (``applied``: and what was done)."""

    applied: bool
    window_days: int
    min_hits: int
    max_notes: int
    budget_chars: int
    always_load: tuple[str, ...]
    promote: tuple[HeatChange, ...] = ()
    demote: tuple[HeatChange, ...] = ()
    skipped: tuple[HeatChange, ...] = ()


def _status(text: str) -> str:
    return str(parse_frontmatter(text)[0].get("status") or "").strip().casefold()


def _shown(path: str, text: str) -> int:
    """Characters the note takes in the brief's always-load block."""
    return len(always_load_item(path, text, ALWAYS_LOAD_NOTE_CHARS, TRUNCATED)) + 1


def _cut_at(path: str, text: str) -> int:
    """Characters of the note the brief would show were it never cut (0 when the brief
    shows it whole: at most ``ALWAYS_LOAD_NOTE_CHARS``)."""
    whole = always_load_item(path, text, len(text) + 1, TRUNCATED)
    cut = always_load_item(path, text, ALWAYS_LOAD_NOTE_CHARS, TRUNCATED)
    return 0 if whole == cut else len(whole) - len(whole.split("\n", 1)[0]) - 1


def _demotions(current: dict[str, str], registry: dict[str, str], hits: dict[str, NoteHits],
               today: _dt.date) -> list[HeatChange]:
    out: list[HeatChange] = []
    for path, text in sorted(current.items()):
        status = _status(text)
        seen = registry.get(path, today.isoformat())
        if status in _SPENT:
            out.append(HeatChange(path, hits[path].hits if path in hits else 0,
                                  hits[path].last if path in hits else "", f"status {status}"))
        elif path not in hits and (today - _dt.date.fromisoformat(seen)).days >= WINDOW_DAYS:
            out.append(HeatChange(path, 0, "", f"no recall hit in {WINDOW_DAYS} days "
                                  f"(always-loaded since {seen})"))
    return out


def _scan_always_load(ctx: EchoContext, unreadable: list[str]) -> dict[str, str]:
    """path -> text of every markdown note whose frontmatter says ``always_load: true``
    (reads every note, in batches); a note that cannot be read (not UTF-8) is added to
    ``unreadable`` and left out."""
    paths = [p for p in ctx.vault.storage.list("") if p.endswith(".md")]
    found: dict[str, str] = {}
    for start in range(0, len(paths), BATCH):
        texts, bad = read_current(ctx, paths[start:start + BATCH])
        unreadable += bad
        for path, text in texts.items():
            if text is not None and text_is_always_load(text):
                found[path] = text
    return found


def plan_heat(ctx: EchoContext) -> tuple[HeatResult, dict[str, str], tuple[str, ...]]:
    """The policy's proposals (module docstring), the texts of the notes they name, and
    the notes that could not be read (left out)."""
    today = ctx.today()
    compact_hits(ctx.state_dir, today)
    hits = hits_since(ctx.state_dir, today - _dt.timedelta(days=WINDOW_DAYS - 1))
    unreadable: list[str] = []
    current = _scan_always_load(ctx, unreadable)
    registry = save_registry(ctx.state_dir, current, today)
    budget = load_budget(ctx.env, brief=True)
    share = budget // ALWAYS_LOAD_SHARE
    demote = _demotions(current, registry, hits, today)
    staying = {p: t for p, t in current.items() if p not in {d.path for d in demote}}
    used = len(BLOCK_HEADING) + sum(_shown(p, t) for p, t in staying.items())
    hot = sorted(sorted((h for p, h in hits.items()
                         if p not in current and h.hits >= PROMOTE_MIN_HITS),
                        key=lambda h: h.path),
                 key=lambda h: (h.hits, h.last), reverse=True)  # ties: path order
    read, bad = read_current(ctx, [h.path for h in hot])
    texts = {p: t for p, t in read.items() if t is not None}
    unreadable += [p for p in bad if p not in unreadable]
    promote: list[HeatChange] = []
    skipped: list[HeatChange] = []
    for h in hot:
        text = texts.get(h.path)
        if text is None or _status(text) in _SPENT:
            continue
        reason = f"{h.hits} recall hits in {WINDOW_DAYS} days"
        size = _shown(h.path, text)
        too_long = _cut_at(h.path, text)
        if len(staying) + len(promote) >= MAX_ALWAYS_LOAD:
            skipped.append(HeatChange(h.path, h.hits, h.last, f"{reason}; already "
                                      f"{MAX_ALWAYS_LOAD} always-loaded notes"))
        elif too_long:
            skipped.append(HeatChange(h.path, h.hits, h.last, f"{reason}; {too_long} "
                                      f"characters, over the {ALWAYS_LOAD_NOTE_CHARS} "
                                      "characters the brief shows of one note (it would be "
                                      "cut); recall finds it, or make a short note to "
                                      "always load"))
        elif used + size > share:
            skipped.append(HeatChange(h.path, h.hits, h.last, f"{reason}; {size} characters "
                                      f"do not fit the {share - used} left of the brief's "
                                      "always-load share"))
        else:
            promote.append(HeatChange(h.path, h.hits, h.last, reason))
            used += size
    named = {**current, **{c.path: texts[c.path] for c in promote}}
    result = HeatResult(False, WINDOW_DAYS, PROMOTE_MIN_HITS, MAX_ALWAYS_LOAD, share,
                        tuple(sorted(current)), tuple(promote), tuple(demote), tuple(skipped))
    return result, named, tuple(unreadable)


def heat(ctx: EchoContext, *, apply: bool = False) -> Envelope[HeatResult]:
    """``heat`` (module docstring). Result: ``HeatResult``. Errors: 2 for a bad
    ``ECHO_LOAD_BUDGET``; 75 when the vault lock is held too long (``apply``). A note
    that cannot be read is left out, with a warning naming it."""
    if not apply:
        result, _texts, unreadable = plan_heat(ctx)
        return Envelope(True, Action.DRY_RUN, _message(result), result, _warnings(unreadable))
    with ctx.vault.storage.lock(timeout=LOCK_TIMEOUT):
        result, texts, unreadable = plan_heat(ctx)
        done_promote, done_demote, left = [], [], []
        for change in result.promote:
            try:
                ctx.vault.update_note(change.path, set_frontmatter_key(
                    texts[change.path], KEY, True), texts[change.path])
                done_promote.append(change)
            except EchoError as exc:
                left.append(attrs.evolve(change, reason=f"{change.reason}; not set: "
                                         f"{exc.message}"))
        for change in result.demote:
            try:
                ctx.vault.update_note(change.path, remove_frontmatter_key(
                    texts[change.path], KEY), texts[change.path])
                done_demote.append(change)
            except EchoError as exc:
                left.append(attrs.evolve(change, reason=f"{change.reason}; not cleared: "
                                         f"{exc.message}"))
        now = (set(result.always_load) - {c.path for c in done_demote}) | {
            c.path for c in done_promote}
        save_registry(ctx.state_dir, now, ctx.today())
    result = attrs.evolve(result, applied=True, always_load=tuple(sorted(now)),
                          promote=tuple(done_promote), demote=tuple(done_demote),
                          skipped=(*result.skipped, *left))
    action = Action.UPDATED if done_promote or done_demote else Action.UNCHANGED
    return Envelope(True, action, _message(result), result, _warnings(unreadable))


def _warnings(unreadable: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"{p} is not UTF-8 text; heat skipped it" for p in unreadable)


def _message(result: HeatResult) -> str:
    verb = ("promoted", "demoted") if result.applied else ("would promote", "would demote")
    text = (f"{len(result.always_load)} always-loaded notes; {verb[0]} "
            f"{len(result.promote)}, {verb[1]} {len(result.demote)}")
    if not result.applied and (result.promote or result.demote):
        text += f" (nothing written; run again with {spell('apply')} to make it so)"
    return text
