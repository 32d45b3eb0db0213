"""``reflect`` (SPEC §4.4): proposals in, classified against the index, previewed, and
written through capture only when asked.

``reflect(ctx, proposals, apply=...)`` takes a list of proposal objects (the schema of
``echo_core.ops.proposals``, plus ``supersedes``), validates them all first (``EchoError``
2 naming ``proposals[i].field``, nothing written), then for each:

* preview (the default): a dry-run capture classifies it — ``create``, ``update``,
  ``inbox`` (LOW confidence or no kind), ``supersede`` (it names ``supersedes``),
  ``gated`` (the duplicate gate would stop it: its ``candidates``),
  ``supersede-suggested`` (the contradiction check would stop it: ``supersedes`` lists
  the values that would replace the lines it contradicts), or ``unchanged`` (already
  recorded: see below). Each proposal is previewed against the vault as it will be once the proposals
  before it in the same batch are applied (``preview_proposals``: they are applied in
  memory, ``ops.reflect_preview``), so a note the first one creates is what the second
  updates, and the preview says what apply then does; nothing is written;
* apply: the capture itself (gate-aware): ``created``, ``updated``, ``superseded``,
  ``inbox``, ``gated``, ``contradiction`` (stopped; ``supersedes`` says how to answer:
  add ``"supersedes": VALUE`` to the proposal), ``queued`` (the vault was unreachable:
  it waits in the outbox), ``unchanged``. A stop is data, not an error.

A proposal whose capture fails on its own (e.g. an alias another note holds) is
``error`` with the reason; the others still go ahead, and an apply with an ``error`` item
is not ok (the CLI exits 1), so a script sees that not everything was saved.

Idempotent: each routed proposal is captured under an operation id derived from its
content (``proposal_op_id``), so applying the same proposals again changes nothing
(``unchanged``) — on any later day too; a proposal whose body the note it would update
already holds is ``unchanged`` as well, and so is an inbox proposal whose line (any
date, waiting or processed) is in the inbox already.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.actions import Action
from echo_core.errors import EchoError, ExitCode, usage_error
from echo_core.models import Envelope
from echo_core.operations.spelling import spell
from echo_core.ops.capture import capture, inbox_entry, require_initialised
from echo_core.ops.inbox_marks import struck_original
from echo_core.ops.proposals import (
    PROPOSAL_KEYS,
    Proposal,
    confidence_band,
    validate_proposal,
)
from echo_core.user_json import parse_user_json
from echo_core.vault import INBOX_PATH

if TYPE_CHECKING:
    from echo_core.context import EchoContext

REFLECT_KEYS = (*PROPOSAL_KEYS, "supersedes")
LIST_NAME = "proposals"
MAX_PROPOSALS = 10000

_PREVIEW: dict[str, str] = {
    Action.DRY_RUN_CREATE: "create", Action.DRY_RUN_UPDATE: "update",
    Action.DRY_RUN_INBOX: "inbox", Action.DRY_RUN_DUPLICATE_GATE: "gated",
    Action.DRY_RUN_CONTRADICTION: "supersede-suggested"}
_APPLIED: dict[str, str] = {
    Action.CREATED: "created", Action.UPDATED: "updated", Action.UNCHANGED: "unchanged",
    Action.INBOX: "inbox", Action.DUPLICATE_GATE: "gated",
    Action.CONTRADICTION: "contradiction", Action.QUEUED: "queued"}
#: Preview classifications of a proposal that writes when applied.
_WRITES = frozenset({"create", "update", "inbox", "supersede"})
#: An applied outcome as the preview names it.
_AS_PREVIEW: dict[str, str] = {
    "created": "create", "updated": "update", "superseded": "supersede", "inbox": "inbox",
    "unchanged": "unchanged", "gated": "gated", "contradiction": "supersede-suggested",
    "error": "error"}
#: Errors of one proposal's capture that do not stop the others.
_ITEM_ERRORS = (ExitCode.USAGE, ExitCode.NOT_FOUND)
_INBOX_LINE = re.compile(r"-\s+\d{4}-\d{2}-\d{2}: (.*)")


@attrs.frozen
class ProposalOrigin:
    """Where a mined proposal came from (transcript mining, Claude Code's memory files):
    shown with its classification so a person can judge it."""

    rationale: str = ""
    category: str = ""
    excerpts: tuple[str, ...] = ()
    sessions: tuple[str, ...] = ()
    turns: tuple[str, ...] = ()
    occurrences: int = 1


@attrs.frozen
class ReflectItem:
    """One proposal and its classification (preview) or outcome (apply)."""

    index: int
    title: str
    confidence: float
    band: str  # high | medium | low
    route: str  # the kind it is captured with, or "inbox"
    classification: str
    path: str | None = None
    detail: str = ""
    candidates: tuple[dict[str, Any], ...] = ()
    #: a contradiction: the value(s) that would replace the contradicted line(s)
    supersedes: tuple[str, ...] = ()
    superseded: str | None = None
    origin: ProposalOrigin | None = None


@attrs.frozen
class ReflectResult:
    """Every proposal's item, in input order, and how many got each classification."""

    applied: bool
    items: tuple[ReflectItem, ...]
    counts: dict[str, int]
    source: str = ""


def read_proposals_json(text: str, what: str = "PROPOSALS") -> list[object]:
    """The proposal list of a JSON text: a list, or ``{"proposals": [...]}``.
    ``EchoError`` 2 naming ``what`` when it is neither, or not JSON Python can read
    (``user_json.parse_user_json``: too deep, an integer too long)."""
    raw = parse_user_json(text, what, "see `echo-memory reflect --help`")
    if isinstance(raw, Mapping) and set(raw) == {LIST_NAME}:
        raw = raw[LIST_NAME]
    if not isinstance(raw, list):
        raise usage_error(f"{what}: must be a JSON list of proposals (or "
                          '{"proposals": [...]}); see `echo-memory reflect --help`')
    return raw


def validate_proposals(raw: Sequence[object], ctx: EchoContext) -> tuple[Proposal, ...]:
    """Every proposal validated, or ``EchoError`` 2 naming the first bad field."""
    if len(raw) > MAX_PROPOSALS:
        raise usage_error(f"{LIST_NAME}: {len(raw)} proposals; at most {MAX_PROPOSALS} at once")
    return tuple(validate_proposal(i, p, ctx.manifest, list_name=LIST_NAME, keys=REFLECT_KEYS)
                 for i, p in enumerate(raw))


def proposal_op_id(proposal: Proposal) -> str:
    """The capture operation id of ``proposal`` as routed: the same content, the same id
    (what makes a second apply a no-op)."""
    fields = [proposal.title, proposal.routed_kind, proposal.body, list(proposal.tags),
              list(proposal.aliases), list(proposal.sources), proposal.date,
              proposal.supersedes]
    digest = hashlib.sha256(json.dumps(fields, ensure_ascii=False).encode("utf-8"))
    return "reflect-" + digest.hexdigest()[:16]


def _inbox_entry(proposal: Proposal) -> str:
    return inbox_entry(proposal.title, proposal.body)


def _in_inbox(ctx: EchoContext, proposal: Proposal) -> bool:
    """Whether the inbox holds this proposal's line, with any date, waiting or struck."""
    storage = ctx.vault.storage
    if not storage.exists(INBOX_PATH):
        return False
    entry = _inbox_entry(proposal)
    for line in storage.read(INBOX_PATH).splitlines():
        found = _INBOX_LINE.match(struck_original(line.strip()) or line.strip())
        if found and found.group(1).rstrip() == entry:
            return True
    return False


def _holds_body(ctx: EchoContext, path: str | None, body: str) -> bool:
    """Whether the note at ``path`` already holds every line of ``body``."""
    if not path or not ctx.vault.storage.exists(path):
        return False
    text = ctx.vault.storage.read(path)
    lines = [line.strip().removeprefix("- ").strip() for line in body.splitlines()]
    return all(line in text for line in lines if line)


def _item(proposal: Proposal, classification: str, envelope: Envelope[object] | None,
          origin: ProposalOrigin | None, detail: str = "") -> ReflectItem:
    data = envelope.data if envelope is not None else None
    contradictions = getattr(data, "contradictions", ()) or ()
    return ReflectItem(
        proposal.index, proposal.title, proposal.confidence,
        confidence_band(proposal.confidence), proposal.routed_kind or "inbox",
        classification, path=getattr(data, "path", None),
        detail=detail or (envelope.message if envelope is not None else ""),
        candidates=tuple(dict(c) for c in getattr(data, "candidates", ()) or ()),
        supersedes=tuple(dict.fromkeys(c["supersedes"] for c in contradictions)),
        superseded=getattr(data, "superseded", None), origin=origin)


def _already(ctx: EchoContext, proposal: Proposal) -> str:
    """Why ``proposal`` is already recorded ("" when it is not)."""
    if proposal.routed_kind is None:
        return "already in the inbox" if _in_inbox(ctx, proposal) else ""
    if ctx.entity_names.has_op(proposal_op_id(proposal)):
        return "applied before (the same proposal)"
    return ""


def reflect_proposal(ctx: EchoContext, proposal: Proposal, *, apply: bool,
                     origin: ProposalOrigin | None = None) -> ReflectItem:
    """One validated proposal classified (preview) or captured (``apply``), as ``reflect``
    does it (module docstring): idempotent, so the same proposal again is ``unchanged``.
    ``session-end`` captures its ``reflect`` list through it too. Errors propagate
    (``reflect`` turns a proposal's own 2 / 44 into an ``error`` item)."""
    already = _already(ctx, proposal)
    if already:
        return _item(proposal, "unchanged", None, origin, already)
    preview = capture(ctx, proposal.request(dry_run=True))
    kind = _PREVIEW.get(preview.action, str(preview.action))
    if kind == "update" and _holds_body(ctx, getattr(preview.data, "path", None),
                                        proposal.body):
        return attrs.evolve(_item(proposal, "unchanged", preview, origin),
                            detail="the note already holds this text")
    if not apply:
        superseded = getattr(preview.data, "superseded", None)
        return _item(proposal, "supersede" if superseded else kind, preview, origin)
    envelope = capture(ctx, proposal.request(dry_run=False), op_id=proposal_op_id(proposal))
    outcome = _APPLIED.get(envelope.action, str(envelope.action))
    if outcome == "inbox" and not getattr(envelope.data, "changed", True):
        outcome = "unchanged"
    elif outcome in ("created", "updated") and getattr(envelope.data, "superseded", None):
        outcome = "superseded"
    return _item(proposal, outcome, envelope, origin)


def _guarded(ctx: EchoContext, proposal: Proposal, origin: ProposalOrigin | None,
             apply: bool) -> ReflectItem:
    try:
        return reflect_proposal(ctx, proposal, apply=apply, origin=origin)
    except EchoError as exc:
        if exc.code not in _ITEM_ERRORS:
            raise
        return _item(proposal, "error", None, origin, exc.message)


def preview_proposals(ctx: EchoContext, proposals: Sequence[Proposal],
                      origins: Sequence[ProposalOrigin | None]) -> tuple[ReflectItem, ...]:
    """Each proposal previewed against the vault as the proposals before it leave it
    (module docstring): classified by a dry run, then applied in a ``PreviewContext``
    (writes in memory only) so the next one sees it. When that apply ends otherwise than
    the dry run said (e.g. an alias another note holds), the item says what apply will
    do. Writes nothing. Errors: 75 lock held; ``BackendUnavailable``; 78 when no
    temporary folder can be made (a proposal's own 2 / 44 is its ``error`` item)."""
    from echo_core.ops.reflect_preview import preview_context

    items: list[ReflectItem] = []
    view: EchoContext = ctx
    with contextlib.ExitStack() as stack:
        for proposal, origin in zip(proposals, origins, strict=True):
            item = _guarded(view, proposal, origin, False)
            if item.classification in _WRITES:
                if view is ctx:
                    view = stack.enter_context(preview_context(ctx))
                done = _guarded(view, proposal, origin, True)
                outcome = _AS_PREVIEW.get(done.classification, done.classification)
                if outcome != item.classification:
                    item = attrs.evolve(done, classification=outcome)
            items.append(item)
    return tuple(items)


def _summary(result: ReflectResult) -> str:
    counts = ", ".join(f"{n} {c}" for c, n in result.counts.items()) or "no proposals"
    if not result.applied:
        todo = any(i.classification in ("create", "update", "inbox", "supersede")
                   for i in result.items)
        tail = f"; run again with {spell('apply')} to write them" if todo else ""
        return f"preview (nothing written): {counts}{tail}"
    stopped = [i.title for i in result.items if i.classification in ("gated", "contradiction")]
    failed = [i.title for i in result.items if i.classification == "error"]
    return (f"reflected: {counts}"
            + (f"; stopped (not saved): {', '.join(stopped)}" if stopped else "")
            + (f"; failed (not saved, see each item's detail): {', '.join(failed)}"
               if failed else ""))


def reflect(ctx: EchoContext, proposals: Sequence[object], *, apply: bool,
            origins: Sequence[ProposalOrigin | None] | None = None,
            source: str = "") -> Envelope[ReflectResult]:
    """Validate ``proposals`` (parsed JSON objects or ``Proposal``), then preview or apply
    them (module docstring). ``origins[i]`` (optional) is shown with proposal ``i``.
    Result data: ``ReflectResult``; action ``dry-run`` or ``reflected``, ok even when
    proposals were gated (a stop is data), not ok (exit 1) when an applied proposal
    failed on its own (an ``error`` item: the others were still applied). Errors: 2 an invalid proposal (nothing written), 75 lock held,
    78 vault not initialised."""
    valid = (tuple(p for p in proposals if isinstance(p, Proposal))
             if all(isinstance(p, Proposal) for p in proposals)
             else validate_proposals(proposals, ctx))
    require_initialised(ctx)
    extra = list(origins or ())
    kept = [extra[i] if i < len(extra) else None for i in range(len(valid))]
    items = (tuple(_guarded(ctx, p, kept[i], True) for i, p in enumerate(valid)) if apply
             else preview_proposals(ctx, valid, kept))
    counts: dict[str, int] = {}
    for item in items:
        counts[item.classification] = counts.get(item.classification, 0) + 1
    result = ReflectResult(apply, items, counts, source)
    action = Action.REFLECTED if apply else Action.DRY_RUN
    failed = apply and "error" in counts
    return Envelope(not failed, action, _summary(result), result)
