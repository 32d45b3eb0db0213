"""Inbox triage (SPEC §2.5): list the waiting items, then route agreed items through ``capture``.

``list_inbox`` reads ``inbox/captures/inbox.md`` and returns its *waiting* items, the
``- YYYY-MM-DD: text`` lines (headings, prose and struck lines are not items; a missing
inbox is an empty list). Routed items are struck in place, never deleted: the rule is
in ``echo_core.ops.inbox_marks``.

``apply_proposals`` takes proposals (a JSON list, or ``{"proposals": [...]}``), each::

    {"line": "- 2026-02-20: met Ada", "title": "Ada Lovelace", "kind": "person",
     "body"?, "tags"?, "aliases"?, "sources"?, "status"?, "date"?, "domain"?,
     "merge_into"?, "force"?, "action"?: "stay"}

``body`` defaults to the inbox item's text and ``date`` to its date, so an update bullet
carries the day the item was captured. Two levels of problems:

* File-level (``EchoError`` code 2, nothing is classified or written): not a list or
  ``{"proposals": [...]}``, an entry that is not an object, an unknown key, a missing
  ``line`` (or ``title``, unless the item stays), a value of the wrong JSON type, an
  ``action`` other than ``"stay"``. The message names ``proposals[i].field``.
* Item-level (classification ``error`` with the reason; the other items go on): the line
  is not in the inbox, an unknown kind, an unknown ``merge_into``, or any value capture
  rejects (bad date, missing domain, over-long title...).

Classification (every item is checked with a dry-run capture before anything is written):
``create`` (a kind, the title resolves to nothing), ``update`` (it resolves exactly to an
entity of that kind, or ``merge_into``), ``stay`` (``action: "stay"`` or ``kind: null``),
``gated`` (the duplicate gate would stop it; ``candidates`` say why), ``done`` (the line
is already struck as processed in the inbox, or it is *routed, not struck*: its audit
line ``- <line> → <path>`` is in the processing log of a day no strike of that line
names, as a run stopped before striking leaves it; ``inbox_marks.unstruck_routes``),
``error``. A line added again after its routing was struck is a new item and is routed
with its own proposal.

Preview (``apply=False``) writes nothing. ``apply=True`` captures each create/update under
the vault lock; the outcome becomes ``created``, ``updated``, ``unchanged`` (the target
already had it) or ``gated`` (an earlier item of the batch made it a near duplicate). Each
created/updated/unchanged item gets its audit line in ``inbox/processing-log/<today>.md``
(idempotent appends), then its inbox line is struck as processed (``- ~~<line>~~ →
<path> (processed <today>)``); a ``done`` one that waits is struck with the day of its
audit line. A ``stay``, ``gated`` or ``error`` item keeps waiting. Lock, backend and
configuration errors propagate; the audit lines make a re-run safe.
"""

from __future__ import annotations

import collections
import datetime as _dt
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.actions import Action
from echo_core.errors import EchoError, ExitCode, usage_error
from echo_core.models import CaptureRequest, Envelope
from echo_core.operations.spelling import spell
from echo_core.ops.inbox_marks import (
    EXPIRED_TARGET,
    finished_line,
    mark_inbox,
    processed_line,
    read_optional,
    struck_lines,
    struck_original,
    struck_target,
    unstruck_routes,
)
from echo_core.user_json import parse_user_json
from echo_core.vault import INBOX_PATH
from echo_core.vault_seen import require_initialised

if TYPE_CHECKING:
    from echo_core.context import EchoContext

PROCESSING_LOG_DIR = "inbox/processing-log"
INBOX_LINE = re.compile(r"^- (\d{4}-\d{2}-\d{2}): (.*\S)\s*$")
ALLOWED_KEYS = ("line", "title", "kind", "body", "tags", "aliases", "sources", "status",
                "date", "domain", "merge_into", "force", "action")
_TEXT_KEYS = ("body", "status", "date", "domain", "merge_into")
_LIST_KEYS = ("tags", "aliases", "sources")
#: Dry-run capture action -> preview classification.
_PLANNED: dict[str, str] = {Action.DRY_RUN_CREATE: "create", Action.DRY_RUN_UPDATE: "update",
                            Action.DRY_RUN_DUPLICATE_GATE: "gated",
                            Action.DRY_RUN_CONTRADICTION: "gated"}
#: Capture action -> applied outcome (all of these except ``gated`` get an audit line).
_APPLIED: dict[str, str] = {Action.CREATED: "created", Action.UPDATED: "updated",
                            Action.UNCHANGED: "unchanged", Action.DUPLICATE_GATE: "gated",
                            Action.CONTRADICTION: "gated"}


@attrs.frozen
class InboxItem:
    """One inbox line: the exact ``line``, its ``date`` (ISO), ``text`` and age in days."""

    line: str
    date: str
    text: str
    age_days: int


@attrs.frozen
class RoutedLine:
    """A waiting ``line`` routed but not struck: the audit line of ``day`` says it went to
    ``to`` (a note path, or ``(expired)``) and no strike of that day holds it; the next
    apply naming it strikes it, routing nothing again."""

    line: str
    to: str
    day: str


@attrs.frozen
class TriageList:
    """Result data of ``list_inbox``: the waiting items in file order, how many lines are
    struck as processed or expired (kept in the inbox, no longer waiting), and the list
    lines a person wrote in another form, which triage does not take (``unread``)."""

    items: tuple[InboxItem, ...] = ()
    processed: int = 0
    #: list lines that are not ``- YYYY-MM-DD: text`` (``unread_lines``): not triaged
    unread: tuple[str, ...] = ()
    #: the items routed but not struck (an apply stopped before striking them)
    routed: tuple[RoutedLine, ...] = ()


@attrs.frozen
class Proposal:
    """One validated proposal (``index`` is its position in the file): the capture it
    asks for, and whether it gave its own body (else the inbox item's text is the body;
    an absent date likewise becomes the item's date)."""

    index: int
    line: str
    request: CaptureRequest
    body_given: bool = False
    stay: bool = False
    expire: bool = False


@attrs.frozen
class TriageOutcome:
    """What triage planned (preview) or did (apply) with one proposal.

    ``line`` is the inbox's original line when found, else the proposal's; ``path`` the
    target note; ``detail`` a one-line explanation; ``candidates`` the gate's candidates.
    """

    index: int
    line: str
    classification: str
    path: str | None = None
    detail: str = ""
    candidates: tuple[dict[str, Any], ...] = ()


@attrs.frozen
class TriageApplyResult:
    """Result data of ``apply_proposals``: one outcome per proposal, and whether applied."""

    items: tuple[TriageOutcome, ...] = ()
    applied: bool = False


# -- the inbox ------------------------------------------------------------------------


def parse_inbox(text: str, today: _dt.date) -> list[InboxItem]:
    """The waiting items of ``text``: its ``- YYYY-MM-DD: text`` lines (anything else, a
    bad date, or a line struck as processed, ``- ~~...~~``, is skipped)."""
    items: list[InboxItem] = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        found = INBOX_LINE.match(line)
        if not found:
            continue
        try:
            day = _dt.date.fromisoformat(found.group(1))
        except ValueError:
            continue
        items.append(InboxItem(line=line, date=day.isoformat(), text=found.group(2).strip(),
                               age_days=(today - day).days))
    return items


#: A list line of any form: a ``-``, ``*`` or ``+`` bullet, a task, a numbered item.
_LIST_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")


def unread_lines(text: str, today: _dt.date) -> list[str]:
    """The list lines of the inbox ``text`` that are neither a waiting item
    (``parse_inbox``: ``- YYYY-MM-DD: text`` with a real date) nor struck as processed:
    a ``*`` bullet, a task ``- [ ] ...``, an undated or misdated line a person typed.
    Triage does not take them; listing them says so rather than skipping them silently."""
    waiting = {item.line for item in parse_inbox(text, today)}
    return [line for raw in text.splitlines()
            if _LIST_LINE.match(line := raw.rstrip("\r")) and line not in waiting
            and struck_original(line) is None]


def list_inbox(ctx: EchoContext) -> Envelope[TriageList]:
    """The waiting inbox items (``TriageList``), those of them routed but not struck
    (``routed``: where they went), and the list lines in another form (``unread_lines``),
    said in the message; a missing inbox is an empty list. Reads only."""
    text = read_optional(ctx, INBOX_PATH)
    items = tuple(parse_inbox(text, ctx.today()))
    unstruck = unstruck_routes(text, _audit_logs(ctx), (i.line.strip() for i in items))
    routed = tuple(RoutedLine(i.line, *unstruck[i.line.strip()]) for i in items
                   if i.line.strip() in unstruck)
    unread = tuple(unread_lines(text, ctx.today()))
    processed = sum(1 for line in text.splitlines() if struck_original(line) is not None)
    kept = f"; {processed} processed (struck, kept in the file)" if processed else ""
    if unread:
        kept += (f"; {len(unread)} line{'s' if len(unread) > 1 else ''} not in the item "
                 "form `- YYYY-MM-DD: text` (not triaged; rewrite to include)")
    if not items:
        return Envelope(True, Action.LISTED, f"nothing waiting in the inbox{kept}",
                        TriageList((), processed, unread))
    oldest = max(item.age_days for item in items)
    noun = "item" if len(items) == 1 else "items"
    if routed:
        kept = (f"; {len(routed)} routed but not struck (an apply stopped before striking, or "
                "a strike removed by hand): an apply naming the line strikes it, routing "
                f"nothing again{kept}")
    return Envelope(True, Action.LISTED, f"{len(items)} inbox {noun} waiting (oldest "
                    f"{oldest} days){kept}", TriageList(items, processed, unread, routed))


# -- validation -----------------------------------------------------------------------


def read_proposals(text: str) -> object:
    """Parse a proposals file's JSON text (``EchoError`` 2 when it is not JSON Python can
    read: ``user_json.parse_user_json``)."""
    return parse_user_json(text, "proposals file", "see `echo-memory triage apply --help`")


def proposal_list(raw: object) -> Sequence[object]:
    """The proposals of a parsed file: a list, or {"proposals": [...]} (else exit 2)."""
    if isinstance(raw, Mapping):
        extra = sorted(str(k) for k in raw if k != "proposals")
        if extra:
            raise usage_error(f"proposals file: unknown top-level key {extra[0]!r}; use a "
                              'JSON list or {"proposals": [...]}')
        raw = raw.get("proposals")
        if not isinstance(raw, list):
            raise usage_error('proposals: must be a list of proposal objects, e.g. '
                              '{"proposals": [{"line": "...", "title": "...", "kind": "person"}]}')
    if not isinstance(raw, list):
        raise usage_error('proposals file: must be a JSON list or {"proposals": [...]}, got '
                          f"{type(raw).__name__}")
    return raw


def _one_proposal(index: int, raw: object, problems: list[str], actions: tuple[str, ...],
                  name: str) -> Proposal | None:
    where = f"{name}[{index}]"
    if not isinstance(raw, Mapping):
        problems.append(f"{where}: must be an object with line, title and kind")
        return None
    start = len(problems)
    for key in raw:
        if key not in ALLOWED_KEYS:
            problems.append(f"{where}.{key}: unknown key (allowed: {', '.join(ALLOWED_KEYS)})")
    action = raw.get("action")
    if action is not None and action not in actions:
        allowed = " or ".join(f'"{a}"' for a in actions)
        problems.append(f"{where}.action: must be {allowed} (or absent), got {action!r}")
    kind = raw.get("kind")
    if kind is not None and not isinstance(kind, str):
        problems.append(f"{where}.kind: must be a string or null, got {kind!r}")
    expire = action == "expire"
    stay = not expire and (action == "stay" or kind is None)
    line, title = raw.get("line"), raw.get("title")
    if not isinstance(line, str):
        problems.append(f"{where}.line: required string (an exact line of the inbox)")
    if not (isinstance(title, str) or ((stay or expire) and title is None)):
        problems.append(f"{where}.title: required string (the entity's name)")
    for key in _TEXT_KEYS:
        if not isinstance(raw.get(key), (str, type(None))):
            problems.append(f"{where}.{key}: must be a string, got {raw.get(key)!r}")
    for key in _LIST_KEYS:
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(f"{where}.{key}: must be a list of strings, got {value!r}")
    if not isinstance(raw.get("force", False), bool):
        problems.append(f"{where}.force: must be true or false, got {raw.get('force')!r}")
    if len(problems) > start:
        return None
    request = CaptureRequest(
        title=str(title or ""), kind=kind, body=raw.get("body") or "",
        tags=tuple(raw.get("tags", ())), aliases=tuple(raw.get("aliases", ())),
        sources=tuple(raw.get("sources", ())), status=raw.get("status"), date=raw.get("date"),
        domain=raw.get("domain"), merge_into=raw.get("merge_into"),
        force=bool(raw.get("force", False)))
    return Proposal(index=index, line=str(line), request=request,
                    body_given=raw.get("body") is not None, stay=stay, expire=expire)


def validate_proposals(raw: object, *, actions: tuple[str, ...] = ("stay",),
                       name: str = "proposals", command: str = "triage apply") -> list[Proposal]:
    """Validated proposals, or one ``EchoError`` (2) listing every file-level problem.

    ``actions``: the ``action`` values allowed (``inbox review`` adds ``"expire"``);
    ``name`` prefixes the fields the problems name (``proposals[1].kind``); ``command``
    is the verb whose ``--help`` the message points to."""
    problems: list[str] = []
    proposals = [_one_proposal(i, entry, problems, actions, name)
                 for i, entry in enumerate(proposal_list(raw))]
    if problems:
        shown = "; ".join(problems[:10]) + (f"; ... {len(problems) - 10} more"
                                             if len(problems) > 10 else "")
        raise usage_error(f"invalid {name}: {shown}. Fix the file and re-run "
                          f"(`echo-memory {command} --help` shows the format)")
    return [p for p in proposals if p is not None]


# -- classification and apply ----------------------------------------------------------


def audit_line(line: str, path: str) -> str:
    """The processing-log line recording that inbox ``line`` was routed to ``path``:
    ``- <original line without its bullet> → <path>`` (one bullet, not ``- - ``)."""
    original = line.strip()
    original = original.removeprefix("- ")
    return f"- {original} → {path}"


def _audit_logs(ctx: EchoContext) -> dict[str, str]:
    """Day (the file name) -> text of each processing-log file."""
    storage = ctx.vault.storage
    paths = [p for p in storage.list(PROCESSING_LOG_DIR) if p.endswith(".md")]
    texts = storage.read_many(paths) if paths else {}
    return {path.rpartition("/")[2].removesuffix(".md"): text
            for path, text in texts.items() if text}


@attrs.frozen
class InboxState:
    """The inbox as triage reads it: ``waiting`` items by their stripped line (the first
    of identical lines), ``struck`` lines by the original line they hold, the waiting
    lines routed but not struck (``unstruck``: line -> target and day of its audit line,
    ``inbox_marks.unstruck_routes``) and how many waiting lines there are (``count``,
    identical lines included)."""

    waiting: Mapping[str, InboxItem]
    struck: Mapping[str, str]
    unstruck: Mapping[str, tuple[str, str]]
    count: int = 0


def read_state(ctx: EchoContext) -> InboxState:
    """The inbox and the processing log, read once (under the lock when applying)."""
    text = read_optional(ctx, INBOX_PATH)
    items = parse_inbox(text, ctx.today())
    waiting: dict[str, InboxItem] = {}
    for item in items:
        waiting.setdefault(item.line.strip(), item)
    unstruck = unstruck_routes(text, _audit_logs(ctx), waiting)
    return InboxState(waiting, struck_lines(text), unstruck, len(items))


def unstruck_outcome(index: int, item: InboxItem, route: tuple[str, str]) -> TriageOutcome:
    """``done`` for a waiting line routed but not struck (``route``: target and day)."""
    target, day = route
    path = None if target == EXPIRED_TARGET else target
    went = f"routed to {target}" if path else "expired"
    return TriageOutcome(index, item.line, "done", path,
                         f"already {went} on {day} (its audit line is in the processing "
                         "log), not struck; applying marks its line processed")


def _request(p: Proposal, item: InboxItem, *, dry_run: bool) -> CaptureRequest:
    req = p.request
    return attrs.evolve(req, body=req.body if p.body_given else item.text,
                        date=req.date or item.date, dry_run=dry_run)


def _capture_outcome(ctx: EchoContext, p: Proposal, item: InboxItem, *, dry_run: bool,
                     table: Mapping[str, str]) -> TriageOutcome:
    # imported here: the load digest imports this module only to parse the inbox
    from echo_core.ops.capture import CaptureResult, capture

    try:
        env = capture(ctx, _request(p, item, dry_run=dry_run))
    except EchoError as exc:
        if exc.code not in (ExitCode.USAGE, ExitCode.NOT_FOUND):
            raise
        return TriageOutcome(p.index, item.line, "error", None, exc.message)
    data = env.data
    classification = table.get(env.action)
    if classification is None or not isinstance(data, CaptureResult):
        # capture answered something triage does not route (queued, ...)
        return TriageOutcome(p.index, item.line, "error", None,
                             f"capture answered {str(env.action)!r}: {env.message}")
    return TriageOutcome(p.index, item.line, classification, data.path, env.message,
                         tuple(dict(c) for c in data.candidates))


def _plan(ctx: EchoContext, p: Proposal, state: InboxState) -> TriageOutcome:
    key = p.line.strip()
    item = state.waiting.get(key)
    if item is None:
        if (struck := state.struck.get(key)) is not None:
            return TriageOutcome(p.index, key, "done", struck_target(struck),
                                 f"already processed: {struck}")
        return TriageOutcome(p.index, p.line, "error", None,
                             "line not in the inbox (copy it exactly from `echo-memory "
                             "triage list --json`)")
    if p.stay:
        return TriageOutcome(p.index, item.line, "stay", None, "stays in the inbox")
    if (unstruck := state.unstruck.get(key)) is not None:
        return unstruck_outcome(p.index, item, unstruck)
    return _capture_outcome(ctx, p, item, dry_run=True, table=_PLANNED)


def record_audit(ctx: EchoContext, line: str, target: str) -> None:
    """Append the audit line ``- <line> → <target>`` to today's processing log (heading
    first when new; idempotent)."""
    day = ctx.today().isoformat()
    log_path = f"{PROCESSING_LOG_DIR}/{day}.md"
    ctx.vault.create_if_absent(log_path, f"# Processing log {day}\n\n")
    ctx.vault.append_line(log_path, audit_line(line, target))


def _summary(outcomes: Sequence[TriageOutcome], applied: bool) -> str:
    counts = collections.Counter(o.classification for o in outcomes)
    parts = ", ".join(f"{n} {name}" for name, n in sorted(counts.items()))
    if applied:
        return (f"triage applied: {parts or 'nothing to do'}; routed lines are struck as "
                "processed, kept in the inbox")
    return (f"triage preview: {parts or 'nothing to do'}; nothing written (run again with "
            f"{spell('apply')} to route)")


def route(ctx: EchoContext, proposals: Sequence[Proposal], state: InboxState, *,
          apply: bool) -> tuple[list[TriageOutcome], dict[str, str]]:
    """Plan each proposal (a dry-run capture) and, with ``apply``, route the create /
    update ones and write their audit lines. Returns the outcomes and the inbox lines to
    strike (stripped line -> processed line) for ``mark_inbox``; the caller holds the lock
    when applying and writes the strikes last, so an interruption leaves audit lines a
    re-run turns into ``done``."""
    plans = [_plan(ctx, p, state) for p in proposals]
    marks: dict[str, str] = {}
    if not apply:
        return plans, marks
    day = ctx.today().isoformat()
    outcomes: list[TriageOutcome] = []
    for p, plan in zip(proposals, plans, strict=True):
        key = p.line.strip()
        item = state.waiting.get(key)
        outcome = plan
        if item is not None and plan.classification in ("create", "update"):
            outcome = _capture_outcome(ctx, p, item, dry_run=False, table=_APPLIED)
            if outcome.path and outcome.classification != "gated":
                record_audit(ctx, item.line, outcome.path)
        elif (item is not None and plan.classification == "done"
              and (unstruck := state.unstruck.get(key)) is not None):
            went = f"routed to {plan.path}" if plan.path else "expired"
            outcome = attrs.evolve(plan, detail=f"already {went}; its line is now struck "
                                                f"as processed on {unstruck[1]}")
            marks.setdefault(key, finished_line(item.line, *unstruck))
        if item is not None and outcome.path and outcome.classification in (
                "created", "updated", "unchanged"):
            marks.setdefault(key, processed_line(item.line, outcome.path, day))
        outcomes.append(outcome)
    return outcomes, marks


def apply_proposals(ctx: EchoContext, proposals: object, *, apply: bool) -> Envelope[TriageApplyResult]:
    """Validate, classify and (with ``apply``) route ``proposals`` (see module docstring).

    ``proposals`` is the parsed JSON: a list or ``{"proposals": [...]}``. Result: an ok
    envelope with ``TriageApplyResult`` (gated and error items are reported, not fatal).
    Errors: 2 file-level validation problem, 78 vault not initialised; 75 lock held.
    """
    validated = validate_proposals(proposals)
    require_initialised(ctx)
    if apply:
        with ctx.vault.storage.lock():
            outcomes, marks = route(ctx, validated, read_state(ctx), apply=True)
            mark_inbox(ctx, marks)
    else:
        outcomes, _ = route(ctx, validated, read_state(ctx), apply=False)
    return Envelope(True, Action.TRIAGED if apply else Action.DRY_RUN_TRIAGE, _summary(outcomes, apply),
                    TriageApplyResult(tuple(outcomes), apply))
