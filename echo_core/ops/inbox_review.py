"""``inbox review``: the bulk review of every waiting inbox item (issue 16 item 6).

``triage apply`` routes exactly the lines a proposals file names. ``inbox review`` looks
at EVERY waiting item and proposes one thing for each by fixed rules, the first that
applies wins, so the same vault always gets the same proposals:

1. a **decision** of the reviewer for that exact line (``decisions``: the triage
   proposals format, plus ``"action": "expire"``): ``promote`` (a kind and a title:
   capture creates the note, or updates the entity the title resolves to), ``merge``
   (``merge_into``), ``stay`` or ``expire``;
2. ``done``: routed, not struck: its audit line in the processing log says it was
   routed (or expired) on a day no strike of that line names (a run stopped before
   striking, a vault triaged before lines were struck, a strike removed by hand): struck
   with that day, nothing captured again. A line added again after its routing was
   struck is a new item: the rules below apply to it;
3. ``merge``: the item's title (its text up to `` — ``, the way ``capture`` writes inbox
   lines, else the whole text) names exactly one entity, as ``resolve`` matches names
   exactly (slug, title or alias; never a fuzzy guess): that entity gets a dated bullet
   with the rest of the text;
4. ``expire``: older than ``expire_after`` days (default 30): struck as expired with
   today's date (``- ~~<line>~~ (expired <today>)``), never deleted;
5. ``needs-kind``: none of the above: it keeps waiting until a decision gives it a kind.

Each item's ``reason`` says which rule fired and why. Without ``apply`` nothing is
written. With ``apply``, under the vault lock: promote / merge go through capture exactly
as ``triage apply`` routes them (the same ``gated`` / ``error`` / ``done`` outcomes), each
routed or expired item gets its audit line in ``inbox/processing-log/<today>.md`` and its
inbox line struck (``echo_core.ops.inbox_marks``); stay and needs-kind items keep waiting.
A second run finds nothing new to do. Decisions for lines that are not waiting are
reported (``done`` when struck already, else ``error``).
"""

from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.actions import Action
from echo_core.errors import usage_error
from echo_core.models import CaptureRequest, Entity, Envelope
from echo_core.operations.spelling import spell
from echo_core.ops.inbox_marks import (
    EXPIRE_AFTER_DAYS,
    EXPIRED_TARGET,
    expired_line,
    finished_line,
    mark_inbox,
    read_optional,
    struck_target,
)
from echo_core.ops.triage import (
    InboxItem,
    InboxState,
    Proposal,
    parse_inbox,
    read_state,
    record_audit,
    route,
    unstruck_outcome,
    validate_proposals,
)
from echo_core.vault import INBOX_PATH
from echo_core.vault_seen import require_initialised

if TYPE_CHECKING:
    from echo_core.context import EchoContext

#: What ``inbox review`` proposes for an item.
PROPOSALS = ("promote", "merge", "stay", "expire", "done", "needs-kind")
_TITLE_END = " — "


@attrs.frozen
class ReviewItem:
    """One reviewed line: what review proposes (``proposal``, one of ``PROPOSALS``) and
    why (``reason``), and what came of it (``outcome``: a triage classification, or
    ``expire`` / ``expired``, ``stay``). ``age_days`` is None for a decision whose line
    is not waiting; ``path`` the note it goes to; ``detail`` capture's or triage's word."""

    index: int
    line: str
    age_days: int | None
    proposal: str
    reason: str
    outcome: str
    path: str | None = None
    detail: str = ""
    candidates: tuple[dict[str, Any], ...] = ()


@attrs.frozen
class InboxReviewResult:
    """Result data of ``review_inbox``: one item per waiting line (then per decision for a
    line that is not waiting), whether applied, the expiry age used, and how many items
    wait after this run (before it, for a preview)."""

    items: tuple[ReviewItem, ...] = ()
    applied: bool = False
    expire_after: int = EXPIRE_AFTER_DAYS
    waiting: int = 0


@attrs.frozen
class _Row:
    index: int
    line: str
    item: InboxItem | None
    proposal: str
    reason: str
    routed: Proposal | None = None
    path: str | None = None


def _title_and_rest(text: str) -> tuple[str, str]:
    title, sep, rest = text.partition(_TITLE_END)
    return title.strip(), (rest.strip() if sep and rest.strip() else text)


def _domain_of(ctx: EchoContext, kind: str, path: str) -> str | None:
    """The domain folder an entity of a per-domain kind (area) lives in; capture asks for
    it even to update one."""
    route = ctx.manifest.route(kind)
    if "{domain}" not in route.folder:
        return None
    return next((d for d in ctx.manifest.area_domains
                 if path.startswith(route.folder_for(d) + "/")), None)


def _named(ctx: EchoContext, title: str) -> list[Entity]:
    """The entities ``title`` names: the one whose slug it is, else those it is the title
    or an alias of."""
    names = ctx.entity_names
    with names.one_snapshot():
        exact = names.get(title)
        return [exact] if exact is not None else list(names.named(title))


def _merge_row(ctx: EchoContext, index: int, item: InboxItem) -> _Row | None:
    """Rule 3: the item's title names exactly one entity."""
    title, rest = _title_and_rest(item.text)
    found = _named(ctx, title)
    if len(found) != 1:
        return None
    entity = found[0]
    request = CaptureRequest(title=title, kind=entity.kind, body=rest, merge_into=entity.slug,
                             domain=_domain_of(ctx, entity.kind, entity.path))
    routed = Proposal(index=index, line=item.line, request=request, body_given=True)
    return _Row(index, item.line, item, "merge", f"{title!r} names {entity.path} "
                f"({entity.kind} {entity.slug})", routed=routed, path=entity.path)


def _decided_row(index: int, line: str, item: InboxItem | None, d: Proposal) -> _Row:
    """Rule 1: the reviewer's decision for this line."""
    routed = attrs.evolve(d, index=index)
    if d.expire:
        return _Row(index, line, item, "expire", "your decision", routed=routed)
    if d.stay:
        return _Row(index, line, item, "stay", "your decision", routed=routed)
    proposal = "merge" if d.request.merge_into else "promote"
    return _Row(index, line, item, proposal, f"your decision: {d.request.kind} "
                f"{d.request.title!r}", routed=routed)


def _auto_row(ctx: EchoContext, index: int, item: InboxItem,
              unstruck: Mapping[str, tuple[str, str]], expire_after: int) -> _Row:
    """Rules 2-5 for an item without a decision."""
    if (done := unstruck.get(item.line.strip())) is not None:
        went = "expired" if done[0] == EXPIRED_TARGET else f"routed to {done[0]}"
        return _Row(index, item.line, item, "done", f"{went} on {done[1]} (its audit line "
                    "is in the processing log), not struck")
    if (merge := _merge_row(ctx, index, item)) is not None:
        return merge
    if item.age_days > expire_after:
        return _Row(index, item.line, item, "expire", f"{item.age_days} days old, over "
                    f"{expire_after}")
    title, _ = _title_and_rest(item.text)
    several = sorted(e.slug for e in _named(ctx, title))
    if len(several) > 1:
        return _Row(index, item.line, item, "needs-kind", f"{title!r} names several "
                    f"entities ({', '.join(several)}); give merge_into one slug in a "
                    "decision, or a kind (and title) to promote it")
    return _Row(index, item.line, item, "needs-kind", f"{title!r} names no entity; give it "
                "a kind (and title) in a decision to promote it, or merge_into")


def _rows(ctx: EchoContext, state: InboxState, decisions: Sequence[Proposal],
          expire_after: int) -> list[_Row]:
    by_line = {d.line.strip(): d for d in decisions}
    rows: list[_Row] = []
    for key, item in state.waiting.items():
        decision = by_line.pop(key, None)
        rows.append(_decided_row(len(rows), item.line, item, decision) if decision
                    else _auto_row(ctx, len(rows), item, state.unstruck, expire_after))
    for key, decision in by_line.items():  # decisions for lines that are not waiting
        rows.append(_decided_row(len(rows), key, None, decision))
    return rows


def _expire(ctx: EchoContext, row: _Row, state: InboxState, apply: bool,
            marks: dict[str, str]) -> ReviewItem:
    age = row.item.age_days if row.item else None
    if row.item is None:
        struck = state.struck.get(row.line)
        outcome = "done" if struck is not None else "error"
        detail = (f"already processed: {struck}" if struck is not None else
                  "line not waiting in the inbox (copy it exactly from `echo-memory triage "
                  "list --json`)")
        return ReviewItem(row.index, row.line, age, row.proposal, row.reason, outcome,
                          struck_target(struck) if struck else None, detail)
    if (done := state.unstruck.get(row.line.strip())) is not None:
        return _finish(row, row.item, done, apply, marks)
    if not apply:
        return ReviewItem(row.index, row.line, age, row.proposal, row.reason, "expire",
                          detail="applying strikes it as expired")
    record_audit(ctx, row.item.line, EXPIRED_TARGET)
    marks.setdefault(row.line.strip(), expired_line(row.item.line, ctx.today().isoformat()))
    return ReviewItem(row.index, row.line, age, row.proposal, row.reason, "expired",
                      detail="struck as expired, kept in the inbox")


def _finish(row: _Row, item: InboxItem, done: tuple[str, str],
            apply: bool, marks: dict[str, str]) -> ReviewItem:
    """A waiting line routed but not struck: ``done``, struck with its audit line's day."""
    outcome = unstruck_outcome(row.index, item, done)
    if apply:
        marks.setdefault(row.line.strip(), finished_line(item.line, *done))
    return ReviewItem(row.index, row.line, item.age_days, row.proposal, row.reason, "done",
                      outcome.path, "struck as processed" if apply else
                      "applying strikes it as processed")


def _review(ctx: EchoContext, decisions: Sequence[Proposal], expire_after: int,
            apply: bool) -> tuple[list[ReviewItem], int]:
    state = read_state(ctx)
    rows = _rows(ctx, state, decisions, expire_after)
    to_route = [r.routed for r in rows if r.routed is not None and r.proposal != "expire"]
    outcomes, marks = route(ctx, to_route, state, apply=apply)
    by_index = {o.index: o for o in outcomes}
    items: list[ReviewItem] = []
    for row in rows:
        age = row.item.age_days if row.item else None
        if row.proposal == "expire":
            items.append(_expire(ctx, row, state, apply, marks))
        elif (o := by_index.get(row.index)) is not None:
            items.append(ReviewItem(row.index, row.line, age, row.proposal, row.reason,
                                    o.classification, o.path, o.detail, o.candidates))
        elif row.proposal == "done" and row.item is not None and (
                done := state.unstruck.get(row.line.strip())) is not None:
            items.append(_finish(row, row.item, done, apply, marks))
        else:  # needs-kind
            items.append(ReviewItem(row.index, row.line, age, row.proposal, row.reason,
                                    "stay", detail="keeps waiting"))
    if not apply:
        return items, state.count
    mark_inbox(ctx, marks)
    return items, len(parse_inbox(read_optional(ctx, INBOX_PATH), ctx.today()))


def _summary(items: Sequence[ReviewItem], applied: bool, waiting: int) -> str:
    counts = collections.Counter(i.outcome if applied else i.proposal for i in items)
    parts = ", ".join(f"{n} {name}" for name, n in sorted(counts.items())) or "nothing to do"
    if applied:
        return f"inbox review applied: {parts}; {waiting} still waiting"
    return (f"inbox review preview: {parts}; nothing written (run again with "
            f"{spell('apply')} to do it)")


def _check_unique(decisions: Sequence[Proposal]) -> None:
    seen: dict[str, int] = {}
    for d in decisions:
        key = d.line.strip()
        if key in seen:
            raise usage_error(f"decisions[{d.index}].line: a second decision for the same "
                              f"line as decisions[{seen[key]}]; keep one per line")
        seen[key] = d.index


def review_inbox(ctx: EchoContext, decisions: object = None, *,
                 expire_after: int = EXPIRE_AFTER_DAYS,
                 apply: bool = False) -> Envelope[InboxReviewResult]:
    """Propose (and with ``apply`` do) one step per waiting item (module docstring).

    ``decisions``: the parsed JSON (a list or ``{"proposals": [...]}``; None: none).
    Result: an ok envelope with ``InboxReviewResult``; gated and error items are
    reported, not fatal. Errors: 2 invalid decisions (the field named, e.g.
    ``decisions[1].action``) or ``expire_after`` < 1, before anything is read or written;
    78 vault not initialised; 75 lock held."""
    if expire_after < 1:
        raise usage_error(f"expire_after: must be at least 1 (days), got {expire_after}")
    validated = ([] if decisions is None else validate_proposals(
        decisions, actions=("stay", "expire"), name="decisions", command="inbox review"))
    _check_unique(validated)
    require_initialised(ctx)
    if apply:
        with ctx.vault.storage.lock():
            items, waiting = _review(ctx, validated, expire_after, apply=True)
    else:
        items, waiting = _review(ctx, validated, expire_after, apply=False)
    return Envelope(True, Action.TRIAGED if apply else Action.DRY_RUN_TRIAGE,
                    _summary(items, apply, waiting),
                    InboxReviewResult(tuple(items), apply, expire_after, waiting))
