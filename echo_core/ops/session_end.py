"""``session-end <bundle> [--apply]`` (SPEC §4.3, §4.4): commit what a session produced.

The bundle is a JSON object::

    {"slug": "recall-index",                       # kebab-case, required
     "log_body": "## Goal\\nShip recall\\n\\n## Decisions Made\\n- BM25",   # required
     "agent_log_line": "- 2026-03-01: shipped recall",                 # optional
     "scope": "Recall is done; next the MCP server",                   # optional
     "reflect": [{"title": "Prefers pytest", "kind": "semantic",        # optional
                  "body": "Use pytest, not unittest", "tags": [], "aliases": [],
                  "sources": [], "date": "2026-03-01", "confidence": 0.9}]}

Everything is validated before anything is written (``EchoError`` 2 naming the field, e.g.
``reflect[2].confidence``); unknown keys are rejected. Without ``apply`` nothing is
written: the result previews each step (each proposal classified by a dry-run capture:
create / update / inbox / gated, or unchanged when already recorded, see step 3). With
``apply``, under one vault lock and in this order:

1. the session log ``_agent/sessions/<date>-<HHMM>-<slug>.md`` from the session template
   (``## Goal`` / ``## Decisions Made`` / ... sections of ``log_body`` fill the template's
   with the paragraph or list under their heading; everything else - text before any
   section, a plain paragraph after a known section's content, every other section -
   goes under ``## Log``, see ``ops.session_log``); an existing log with other content is refused (2),
   identical content is an idempotent re-apply. A session is its day, slug and content,
   not its minute: when this bundle's log was written earlier the same day
   (``session_log.logged_today``: a hook retry, an outbox replay, a run killed
   half-way), that log is this session's and every step below works from it, so a
   replay writes no second log and no second agent-log line;
2. the agent-log line in today's daily note (default ``- <today>: session [[<stem>]]``;
   a given line without a leading ``- `` gets one);
3. each proposal captured as ``reflect`` captures it (``ops.reflect.reflect_proposal``;
   confidence < 0.6 -> inbox; a gate or contradiction stop is reported as ``gated``, not
   an error). Idempotent like ``reflect``: a proposal applied before (its content-derived
   operation id), one whose note already holds its body, or an inbox line already there
   is ``unchanged``, so re-applying a bundle adds no observation and no agent-log line;
4. ``scope set`` when ``scope`` is given;
5. the heartbeat ``_agent/heartbeat/last-session.md`` = ``"<log path> @ <ISO time>"`` —
   LAST, as the commit marker: any failure before it propagates and leaves the previous
   heartbeat untouched (re-applying the same bundle later that day then completes it);
   left as it is (``unchanged``) when it already names the log.

Re-applying a bundle that was applied in full writes nothing; one with a proposal added
writes only that proposal.

``on_session_end(bundle, ctx)`` fires after the heartbeat (a failing listener is a warning).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.actions import Action
from echo_core.errors import usage_error
from echo_core.models import Envelope
from echo_core.notes import append_under_heading
from echo_core.operations.spelling import spell
from echo_core.ops.capture import require_initialised
from echo_core.ops.daily import AGENT_LOG_HEADING, append_agent_log, daily_note_path
from echo_core.ops.links import link_target
from echo_core.ops.load import HEARTBEAT_PATH, fire_event
from echo_core.ops.proposals import (
    Proposal,
    reject_unknown,
    text_field,
    validate_proposal,
)
from echo_core.ops.reflect import ReflectItem, preview_proposals, reflect_proposal
from echo_core.ops.scope import (
    CONTEXT_PATH,
    PLACEHOLDER,
    SESSIONS_DIR,
    clean_scope,
    read_scope,
    set_scope,
)
from echo_core.ops.session_log import logged_today, render_session_log, session_log_path
from echo_core.ops.session_logs import SessionLogsSource
from echo_core.routing import RoutingManifest
from echo_core.storage_base import none_if_absent
from echo_core.user_json import parse_user_json

if TYPE_CHECKING:
    import datetime as _dt

    from echo_core.context import EchoContext

SLUG_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_SLUG = 80
BUNDLE_KEYS = ("slug", "log_body", "agent_log_line", "scope", "reflect")

#: reflect's classifications of a contradiction stop, which session-end calls ``gated``.
_GATED = ("supersede-suggested", "contradiction")


@attrs.frozen
class SessionBundle:
    """A validated session-end bundle (passed to ``on_session_end``)."""

    slug: str
    log_body: str
    agent_log_line: str | None = None
    scope: str | None = None
    reflect: tuple[Proposal, ...] = ()


@attrs.frozen
class Step:
    """One artefact and what happened (or, in a preview, would happen) to it."""

    artefact: str  # session-log | agent-log | reflect | scope | heartbeat
    path: str | None
    action: str
    detail: str = ""


@attrs.frozen
class ReflectOutcome:
    """One proposal's classification (preview) or outcome (apply)."""

    index: int
    title: str
    confidence: float
    #: preview: create|update|inbox|gated|unchanged;
    #: apply: created|updated|unchanged|inbox|gated|queued
    classification: str
    path: str | None = None
    detail: str = ""
    candidates: tuple[dict[str, Any], ...] = ()


@attrs.frozen
class SessionEndResult:
    """The five artefacts in commit order (``steps``) and each proposal's outcome."""

    applied: bool
    session_log: str
    steps: tuple[Step, ...]
    reflect: tuple[ReflectOutcome, ...] = ()


# -- validation -----------------------------------------------------------------------


def read_bundle(text: str) -> object:
    """Parse a bundle's JSON text (``EchoError`` 2 when it is not JSON Python can read:
    ``user_json.parse_user_json``)."""
    return parse_user_json(text, "bundle", "see `echo-memory session-end --help`")


def _proposal(index: int, raw: object, manifest: RoutingManifest) -> Proposal:
    return validate_proposal(index, raw, manifest, list_name="reflect")


def validate_bundle(raw: object, manifest: RoutingManifest) -> SessionBundle:
    """A ``SessionBundle`` from parsed JSON, or ``EchoError`` 2 naming the bad field."""
    if not isinstance(raw, Mapping):
        raise usage_error("bundle: must be a JSON object with at least slug and log_body; "
                          "see `echo-memory session-end --help`")
    reject_unknown(raw, BUNDLE_KEYS, "")
    slug = raw.get("slug")
    if not isinstance(slug, str) or not SLUG_RE.fullmatch(slug) or len(slug) > MAX_SLUG:
        raise usage_error(f"slug: {slug!r} is not kebab-case (lowercase letters and digits "
                          f"joined by single hyphens, at most {MAX_SLUG} characters, e.g. "
                          "fix-recall-index)")
    log_body = text_field(raw, "log_body", "", required=True)
    line = text_field(raw, "agent_log_line", "", required=False, one_line=True)
    if line is not None and not line.startswith("- "):
        line = f"- {line}"
    scope = text_field(raw, "scope", "", required=False)
    if scope is not None:
        scope = clean_scope(scope)  # refused here, before any write, as scope set refuses it
    reflect = raw.get("reflect")
    if reflect is not None and not isinstance(reflect, list):
        raise usage_error("reflect: must be a list of proposal objects")
    proposals = tuple(_proposal(i, p, manifest) for i, p in enumerate(reflect or []))
    assert log_body is not None
    return SessionBundle(slug, log_body, line, scope, proposals)


# -- the session log ------------------------------------------------------------------


def _session_log(ctx: EchoContext, bundle: SessionBundle, today: _dt.date,
                 now: _dt.datetime) -> tuple[str, str]:
    """(path, text) of this session's log: the one this bundle wrote earlier today when
    there is one (``logged_today``), else the one for ``now``."""
    storage = ctx.vault.storage
    earlier = logged_today(SessionLogsSource(ctx).list(SESSIONS_DIR),
                           lambda p: none_if_absent(lambda: storage.read(p)), today,
                           bundle.slug, bundle.log_body)
    if earlier is not None:
        return earlier, storage.read(earlier)
    return (session_log_path(today, now, bundle.slug),
            render_session_log(bundle.slug, bundle.log_body, today, now))


def _heartbeat(ctx: EchoContext, path: str, now: _dt.datetime) -> tuple[str, bool]:
    """The heartbeat text for the log ``path``, and whether the heartbeat already names
    that log (then it is left as it is)."""
    current = none_if_absent(lambda: ctx.vault.storage.read(HEARTBEAT_PATH))
    marked = current is not None and current.startswith(f"{path} @ ")
    return f"{path} @ {now.isoformat(timespec='seconds')}\n", marked


# -- the steps ------------------------------------------------------------------------


def _reflect(ctx: EchoContext, proposal: Proposal) -> ReflectOutcome:
    """``proposal`` captured exactly as ``reflect`` does it (so a re-run of the same
    bundle finds it already recorded: ``unchanged``)."""
    return _outcome(reflect_proposal(ctx, proposal, apply=True))


def _previewed(ctx: EchoContext, proposals: tuple[Proposal, ...]) -> list[ReflectOutcome]:
    """The bundle's proposals previewed as ``reflect`` previews a batch
    (``reflect.preview_proposals``): each against the vault as the ones before it leave
    it, so the preview says what apply does (two proposals for one new note: create, then
    update)."""
    return [_outcome(item) for item in preview_proposals(ctx, proposals,
                                                         [None] * len(proposals))]


def _outcome(item: ReflectItem) -> ReflectOutcome:
    classification = "gated" if item.classification in _GATED else item.classification
    return ReflectOutcome(item.index, item.title, item.confidence, classification,
                         path=item.path, detail=item.detail, candidates=item.candidates)


def _reflect_step(outcomes: list[ReflectOutcome]) -> Step:
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.classification] = counts.get(outcome.classification, 0) + 1
    detail = ", ".join(f"{n} {c}" for c, n in counts.items()) or "no proposals"
    return Step("reflect", None, "capture" if outcomes else "skip", detail)


def _log_exists(ctx: EchoContext, path: str, text: str) -> bool:
    """True when an identical log exists; ``EchoError`` 2 when a different one does."""
    if not ctx.vault.storage.exists(path):
        return False
    if ctx.vault.storage.read(path) == text:
        return True
    raise usage_error(f"session log {path} already exists with other content (same minute, "
                      "same slug); use another slug or end the session a minute later")


def _preview(ctx: EchoContext, bundle: SessionBundle, today: _dt.date,
             now: _dt.datetime) -> SessionEndResult:
    path, text = _session_log(ctx, bundle, today, now)
    same = _log_exists(ctx, path, text)
    heartbeat, marked = _heartbeat(ctx, path, now)
    daily = daily_note_path(today)
    line = bundle.agent_log_line or f"- {today.isoformat()}: session [[{link_target(path)}]]"
    present = False  # only a re-apply of this same session (same log) skips its line
    if same and ctx.vault.storage.exists(daily):
        present = not append_under_heading(ctx.vault.storage.read(daily),
                                           AGENT_LOG_HEADING, [line])[1]
    outcomes = _previewed(ctx, bundle.reflect)
    if bundle.scope is None:
        scope = Step("scope", CONTEXT_PATH, "skip", "no scope in the bundle")
    else:
        current = read_scope(ctx).scope
        action = "unchanged" if current == bundle.scope and current != PLACEHOLDER else "set"
        scope = Step("scope", CONTEXT_PATH, action, bundle.scope.splitlines()[0])
    steps = (Step("session-log", path, "unchanged" if same else "create",
                  "identical log already written" if same else f"{len(text)} characters"),
             Step("agent-log", daily, "unchanged" if present else "append", line),
             _reflect_step(outcomes), scope,
             Step("heartbeat", HEARTBEAT_PATH, "unchanged" if marked else "write",
                  heartbeat.strip()))
    return SessionEndResult(False, path, steps, tuple(outcomes))


def _apply(ctx: EchoContext, bundle: SessionBundle, today: _dt.date,
           now: _dt.datetime) -> SessionEndResult:
    vault = ctx.vault
    with vault.storage.lock():  # this session's log looked for under the lock too
        path, text = _session_log(ctx, bundle, today, now)
        same = _log_exists(ctx, path, text)
        if not same:
            vault.write_note(path, text)
        line = bundle.agent_log_line or f"- {today.isoformat()}: session [[{link_target(path)}]]"
        appended = append_agent_log(vault, today, line, rerun=same)
        outcomes = [_reflect(ctx, p) for p in bundle.reflect]
        if bundle.scope is None:
            scope = Step("scope", CONTEXT_PATH, "skip", "no scope in the bundle")
        else:
            envelope = set_scope(ctx, bundle.scope)
            scope = Step("scope", CONTEXT_PATH, str(envelope.action), bundle.scope.splitlines()[0])
        heartbeat, marked = _heartbeat(ctx, path, now)
        if not marked:
            vault.write_note(HEARTBEAT_PATH, heartbeat)  # the commit marker: always last
    steps = (Step("session-log", path, "unchanged" if same else "created",
                  "identical log already written" if same else f"{len(text)} characters"),
             Step("agent-log", daily_note_path(today), "appended" if appended else "unchanged",
                  line),
             _reflect_step(outcomes), scope,
             Step("heartbeat", HEARTBEAT_PATH, "unchanged" if marked else "written",
                  heartbeat.strip()))
    return SessionEndResult(True, path, steps, tuple(outcomes))


def session_end(ctx: EchoContext, bundle: object, *, apply: bool) -> Envelope[SessionEndResult]:
    """Validate ``bundle`` (parsed JSON or a ``SessionBundle``), then preview or apply it
    (see module docstring). Result data: ``SessionEndResult``; action ``dry-run`` or
    ``session-ended``. Errors: 2 invalid bundle or a conflicting session log, 75 lock held,
    78 vault not initialised; any failure during apply propagates before the heartbeat."""
    valid = bundle if isinstance(bundle, SessionBundle) else validate_bundle(bundle, ctx.manifest)
    require_initialised(ctx)
    today, now = ctx.today(), ctx.now()
    if not apply:
        result = _preview(ctx, valid, today, now)
        path = result.session_log
        gated = sum(1 for o in result.reflect if o.classification == "gated")
        written = result.steps[0].action == Action.UNCHANGED
        message = ("preview (nothing written): "
                   + (f"{path} already written" if written else f"would write {path}")
                   + (f"; {gated} proposals would be gated" if gated else "")
                   + f"; run again with {spell('apply')} to commit")
        return Envelope(True, Action.DRY_RUN, message, result)
    result = _apply(ctx, valid, today, now)
    path = result.session_log
    warnings = fire_event(ctx, "on_session_end", bundle=valid, ctx=ctx)
    stopped = [o.title for o in result.reflect if o.classification == "gated"]
    marked = result.steps[-1].action == Action.UNCHANGED
    message = (f"session committed: {path}; heartbeat "
               + ("already names it" if marked else "updated"))
    if stopped:
        message += f"; gated (not saved): {', '.join(stopped)}"
    return Envelope(True, Action.SESSION_ENDED, message, result, warnings)
