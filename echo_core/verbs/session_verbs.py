"""``load`` and ``session-end``: the start and the end of a session, declared once
(SPEC §4.1, §4.3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import (
    Access,
    CliArg,
    CliParam,
    CliSurface,
    McpSurface,
    Operation,
    lazy_type,
    param,
)
from echo_core.text_source import read_text_source
from echo_core.verbs.render_kit import PREVIEW_HEADER
from echo_core.verbs.skill_texts import LOAD_SKILL


@attrs.frozen(kw_only=True)
class LoadParams:
    """What ``load`` takes."""

    brief: bool = param(True, help="true: the budgeted digest (default); false: the digest "
                        "plus the full notes.", cli=CliParam(
                            flag="--brief", help="Only the digest (scope, preferences, last "
                            "session, today's log, inbox count); without it the full texts "
                            "of the key notes follow.", default=False))


def render_load(env: Envelope[Any]) -> str:
    """The digest."""
    return str(env.data.digest)


def run_load(ctx: Any, p: LoadParams) -> Envelope[Any]:
    """``ops.load.load``."""
    from echo_core.ops.load import load

    return load(ctx, brief=p.brief)


LOAD = Operation(
    "load", "Print what the agent should know at the start of a session.",
    ("Load the memory digest that orients a session: scope, operator preferences, recent "
     "observations, the last session's summary, today's agent log and the inbox count. "
     "Call it once at the start of a session (brief=false adds the full notes). Returns "
     "the digest text and its sections."),
    # a write: load first replays the offline outbox (queued captures land in the vault)
    LoadParams, run_load, lazy_type("echo_core.ops.load", "LoadResult"), access="write",
    profile="core", render=render_load, skill=LOAD_SKILL,
    cli=CliSurface(help="""Print what the agent should know at the start of a session.

\b
The brief digest, in order: vault marker (schema, bootstrapped or not);
scope with its date and the sessions logged since; Fact / Pattern; the last
10 Observations; the last session's Goal / Decisions Made / Open Threads /
Suggested Next Step; today's Agent Log; the inbox as a count and the oldest
item's age.

\b
Fact / Pattern shows the operator-preferences note's own section, then one
line per semantic memory note (_agent/memory/semantic/), newest first: every
capture of kind semantic and every session-end reflection of kind semantic,
e.g. echo-memory capture "Operator prefers pytest" --kind semantic

The brief digest stays within $ECHO_LOAD_BUDGET characters (default 8000); a full
load gets three times that. Over budget, observations, then the agent log, then the
session summary, then the semantic notes are cut, each marked "(truncated)".

First replays writes queued while the vault was unreachable (the outbox, as `flush`
does); otherwise it only reads. Exit 78 when the vault is not initialised (run
`echo-memory init`); exit 69 when it is unreachable (the message says to proceed
without memory)."""),
    fresh="full",
)


@attrs.frozen(kw_only=True)
class ReflectProposal:
    """One thing the session learned, to be captured."""

    title: str = param(help="The thing's name (one line).")
    body: str = param(help="What to record.")
    confidence: float = param(help="0..1; below 0.6 goes to the inbox.", ge=0, le=1)
    kind: str = param("", help="The kind of note (see capture); 'semantic' for a "
                      "preference or fact, which the load brief lists under Fact / Pattern.")
    tags: tuple[str, ...] = param((), help="Tags.")
    aliases: tuple[str, ...] = param((), help="Other names.")
    sources: tuple[str, ...] = param((), help="Where it came from.")
    date: str = param("", help="ISO date YYYY-MM-DD.")


@attrs.frozen(kw_only=True)
class SessionEndParams:
    """A session bundle (``ops.session_end.validate_bundle`` checks its meaning)."""

    slug: str = param(help="kebab-case name of the session, e.g. fix-recall-index.",
                      min_length=1, max_length=80, cli=None)
    log_body: str = param(help="Markdown log; '## Goal', '## Decisions Made', '## Open "
                          "Threads', '## Suggested Next Step' sections fill the template "
                          "(the paragraph or list under each heading); everything else "
                          "goes under '## Log'.",
                          min_length=1, max_length=100000, cli=None)
    agent_log_line: str | None = param(None, help="One line for today's agent log "
                                       "(default: a link to the session log).",
                                       max_length=500, cli=None)
    scope: str | None = param(None, help="New scope, if it changed.", max_length=2000,
                              cli=None)
    reflect: tuple[Mapping[str, Any], ...] | None = param(
        None, help="Things learned, each captured (gate-aware).", max_length=50, cli=None,
        items=ReflectProposal)
    apply: bool = param(False, help="false previews (default); true writes.", cli=CliParam(
        help="Write everything for real (default: a preview that writes nothing)."))


BUNDLE_KEYS = ("slug", "log_body", "agent_log_line", "scope", "reflect")


def _read_bundle(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """The CLI's ``session-end BUNDLE.json|-``: the bundle's keys become parameters."""
    from echo_core.errors import usage_error
    from echo_core.ops.session_end import read_bundle

    out = dict(values)
    raw = read_bundle(read_text_source(out.pop("bundle_file"), "BUNDLE.json|-"))
    if not isinstance(raw, Mapping):
        raise usage_error("bundle: must be a JSON object with at least slug and log_body; "
                          "see `echo-memory session-end --help`")
    if "apply" in raw:
        raise usage_error("apply: not a bundle key; pass --apply on the command line")
    out.update(raw)
    return out


def run_session_end(ctx: Any, p: SessionEndParams) -> Envelope[Any]:
    """``ops.session_end.session_end`` of the bundle the parameters hold."""
    from echo_core.ops.session_end import session_end

    bundle: dict[str, Any] = {"slug": p.slug, "log_body": p.log_body}
    for key in ("agent_log_line", "scope"):
        if getattr(p, key) is not None:
            bundle[key] = getattr(p, key)
    if p.reflect is not None:
        bundle["reflect"] = [dict(item) for item in p.reflect]
    return session_end(ctx, bundle, apply=p.apply)


def session_end_access(p: SessionEndParams) -> Access:
    """A write only with ``apply``."""
    return "write" if p.apply else "read"


def render_session_end(env: Envelope[Any]) -> str:
    """Every step (committed or previewed) and each proposal's classification."""
    data = env.data
    lines = ["Committed:" if data.applied else PREVIEW_HEADER]
    for step in data.steps:
        where = f" {step.path}" if step.path else ""
        lines.append(f"  {step.artefact:<12} {step.action:<10}{where}")
        if step.detail:
            lines.append(f"      {step.detail}")
        if step.artefact == "reflect":
            for outcome in data.reflect:
                target = f" -> {outcome.path}" if outcome.path else ""
                lines.append(f"      [{outcome.index}] {outcome.classification:<9} "
                             f"{outcome.title} (confidence {outcome.confidence:g}){target}")
                for c in outcome.candidates:
                    lines.append(f"          candidate: {c.get('slug')}  {c.get('path')}")
    lines.append(env.message)
    return "\n".join(lines)


BUNDLE_HELP = """Commit a session: its log, agent-log line, reflections, scope, heartbeat.

BUNDLE is a JSON file (or - for stdin). Without --apply nothing is written: every step
is previewed, and each reflect proposal is classified (create, update, inbox, gated).

\b
Example bundle:
  {"slug": "recall-index",
   "log_body": "## Goal\\nShip recall\\n\\n## Decisions Made\\n- BM25 ranking",
   "agent_log_line": "- 2026-03-01: shipped the recall index",
   "scope": "Recall is done; next the MCP server",
   "reflect": [{"title": "Operator prefers pytest", "kind": "semantic",
                "body": "Use pytest, never unittest.", "tags": ["testing"],
                "confidence": 0.9}]}

\b
Keys: slug (required, kebab-case), log_body (required, see below),
agent_log_line, scope, reflect (proposals: title, body, confidence 0..1
required; kind, tags, aliases, sources, date optional; confidence below 0.6
goes to the inbox).

\b
log_body: a ## Goal, ## Decisions Made, ## Open Threads or ## Suggested Next
Step section fills the template's with the paragraph or list right under its
heading (and what continues it: list items, indented lines, code, ###
sub-headings). Everything else goes under ## Log, in the order written: text
before the first heading, a plain paragraph after a blank line in a known
section, every other section (as ###).

\b
Preferences: a reflect proposal of kind semantic ("Operator prefers pytest")
becomes a note in _agent/memory/semantic/; the next `echo-memory load` brief
lists every such note under Fact / Pattern.

\b
With --apply, under one vault lock, in this order:
  1. _agent/sessions/<date>-<HHMM>-<slug>.md     the session log
  2. journal/daily/<date>.md ## Agent Log         the agent-log line
  3. each proposal through capture (a gate stop is reported, not fatal)
  4. scope set (when scope is given)
  5. _agent/heartbeat/last-session.md             LAST: the commit marker
A failure before step 5 leaves the previous heartbeat as it was; re-running
the same bundle later the same day completes it. Applying a bundle again (a
retry, a replay) writes nothing twice: its log, found by slug and content,
is reused, so no second log, agent-log line or capture is written.

Exit 2 for an invalid bundle (the message names the field, e.g. reflect[2].confidence)
or when a different log already exists at that path; nothing is written then.
"""

SESSION_END = Operation(
    "session-end", "Commit a session: its log, agent-log line, reflections, scope, heartbeat.",
    ("Close a session: write its log, a line in today's agent log, the reflect proposals "
     "(via capture), the scope, then the heartbeat. Call it at the end of substantive "
     "work, first as a preview, then with apply=true. Returns every step and how each "
     "proposal was classified."),
    SessionEndParams, run_session_end,
    lazy_type("echo_core.ops.session_end", "SessionEndResult"), access=session_end_access,
    profile="core", render=render_session_end, mcp=McpSurface(tool="echo_log_session"),
    cli=CliSurface(extra=(CliArg("bundle_file", "The bundle: a JSON file, or - for stdin.",
                                 metavar="BUNDLE.json|-"),),
                   prepare=_read_bundle, literal_args=True, help=BUNDLE_HELP),
)
