"""The habitat's learn verbs, declared once each (``refs_learn`` lists them by reference).

* ``habitat learn`` (MCP ``echo_store_learning``): store what an agent learned, or
  reinforce the same learning stored before, with the project it was learned in: on the
  CLI the current folder's unless ``--project`` names one (``''``: none); over MCP the
  ``project`` the agent gives (none when it gives none: the server's folder is not the
  agent's).
* ``habitat learnings``: the learnings and their states (CLI only).
* ``habitat approve`` / ``habitat reject``: the operator's decision (CLI only: a model
  does not approve its own learnings; the operator also decides in Obsidian by editing an
  insight note's ``status``).
* ``habitat insights`` (MCP ``echo_habitat_insights``): the approved insights that match
  a situation, as SessionStart injects them, for agents that are not Claude Code.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from echo_core import CliParam, CliSurface, Envelope, McpSurface, Operation, lazy_type, param
from plugins.habitat.learnings import STATES, TYPES

_OPS = "plugins.habitat.learnings_ops"


def _names(help: str) -> Any:
    return param((), help=help, max_length=20, cli=CliParam(split_commas=True, metavar="A,B"))


@attrs.frozen(kw_only=True)
class LearnParams:
    """What ``habitat learn`` / ``echo_store_learning`` take."""

    content: str = param(help="What was learned, as one self-contained statement, e.g. "
                         "'Run the tests with pytest -n 2 before committing'.",
                         min_length=1, max_length=4000, cli=CliParam(positional=True))
    type: str = param("learning", help="What it is: " + ", ".join(TYPES) + ".",
                      choices=TYPES, cli=CliParam(short="-t", metavar="TYPE"))
    tags: tuple[str, ...] = _names("Tags (repeat the option or comma-separate).")
    rationale: str = param("", help="Why it is worth keeping: what happened that taught it.",
                           max_length=2000, cli=CliParam(short="-r", metavar="TEXT"))
    agent_id: str = param("", help="Which agent learned it (default ECHO_AGENT_ID, else the "
                          "surface: cli or mcp).", max_length=200,
                          cli=CliParam(metavar="AGENT"))
    session_id: str = param("", help="The session it was learned in (default "
                            "ECHO_SESSION_ID).", max_length=200,
                            cli=CliParam(metavar="SESSION"))
    project: str | None = param(None, help="The project it was learned in (the repository "
                                "folder's name): only that project's sessions get it "
                                "once approved. '' or none: every project's. On the CLI "
                                "the default is the current folder's project (none in "
                                "the home folder).", max_length=200,
                                cli=CliParam(short="-p", metavar="NAME"))


def _with_project(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """The CLI's default project: the current folder's (``learnings_ops.learned_in``)."""
    out = dict(values)
    if out.get("project") is None:
        from plugins.habitat.learnings_ops import learned_in

        out["project"] = learned_in(os.getcwd(), os.path.expanduser("~"))
    return out


def render_learning(env: Envelope[Any]) -> str:
    """The outcome line, then the learning's text."""
    learning = env.data.learning
    lines = [env.message, f"  {learning.content}"]
    if env.data.redacted:
        lines.append(f"  redacted: {', '.join(env.data.redacted)}")
    return "\n".join(lines)


def run_learn(ctx: Any, p: LearnParams) -> Envelope[Any]:
    """``learnings_ops.store_learning``."""
    from plugins.habitat.learnings_ops import store_learning

    result: Envelope[Any] = store_learning(ctx, p.content, type=p.type, tags=p.tags,
                                           agent_id=p.agent_id, session_id=p.session_id,
                                           rationale=p.rationale, project=p.project or "")
    return result


LEARN = Operation(
    "habitat-learn", "Store what an agent learned (pending the operator's review).",
    ("Store one thing learned while working (a learning, finding, decision, connection or "
     "artifact) for the operator to review; storing the same thing again reinforces it "
     "instead of adding a copy. Use it when something is worth knowing in later sessions. "
     "Returns the learning's id, state and recurrence."),
    LearnParams, run_learn, lazy_type(_OPS, "StoreResult"), access="write",
    render=render_learning, mcp=McpSurface(tool="echo_store_learning"),
    cli=CliSurface(command=("habitat", "learn"), literal_args=True, prepare=_with_project,
                   help="""Store what an agent learned (pending the operator's review).

A near-duplicate of a learning already stored (the same sentence again, up to
case, punctuation, a typo or a filler word) reinforces it: its recurrence goes up
by one and this store is added to its provenance; no second learning is made.
Secrets are redacted and <private> text dropped before anything is written.
CONTENT may start with '-' (it is taken as the text, not as an option).

The learning belongs to the project it is learned in: the repository holding
the current folder (else the folder's own name; none in your home folder or
above it), or --project NAME. Once approved, only that project's sessions get
it; --project '' gives it to every project. Learned again in another project,
it becomes every project's.

\b
Example:
  echo-memory habitat learn "Run the tests with pytest -n 2" \\
      --type finding --tags tests,ci --rationale "it timed out at -n 1\""""),
    needs_vault=False,
)


@attrs.frozen(kw_only=True)
class LearningsParams:
    """What ``habitat learnings`` takes."""

    state: str | None = param(None, help="Only this state: " + ", ".join(STATES) + ".",
                              choices=STATES, cli=CliParam(short="-s", metavar="STATE"))
    type: str | None = param(None, help="Only this type: " + ", ".join(TYPES) + ".",
                             choices=TYPES, cli=CliParam(short="-t", metavar="TYPE"))
    limit: int = param(50, help="Show at most this many (the newest).", ge=1, le=10000,
                       cli=CliParam(short="-n", metavar="N"))


def render_learnings(env: Envelope[Any]) -> str:
    """One block per learning: id, state, recurrence, type, project, then its text."""
    r = env.data
    lines = [f"  {line}" for line in (*r.demoted, *r.synced)]
    for item in r.learnings:
        extra = f", rejected: {item.reason}" if "rejected" in item.state and item.reason else ""
        where = f", insight {item.insight_path}" if item.insight_path else ""
        scope = f"project {item.project}" if item.project else "every project"
        lines.append(f"{item.id}  {item.state}  x{item.recurrence}  {item.type}  {scope}"
                     f"{extra}{where}")
        lines.append(f"    {' '.join(item.content.split())}")
    lines += [f"  ! {p}" for p in r.problems]
    lines.append(env.message)
    return "\n".join(lines)


def run_learnings(ctx: Any, p: LearningsParams) -> Envelope[Any]:
    """``learnings_ops.list_learnings``."""
    from plugins.habitat.learnings_ops import list_learnings

    result: Envelope[Any] = list_learnings(ctx, state=p.state, type=p.type, limit=p.limit)
    return result


LEARNINGS = Operation(
    "habitat-learnings", "List the learnings agents stored, with their states.",
    ("List the learnings of the habitat with their state, recurrence and type. Use it to "
     "review what is pending. Returns the learnings, oldest first."),
    LearningsParams, run_learnings, lazy_type(_OPS, "LearningsResult"), access="write",
    render=render_learnings, mcp=None,
    cli=CliSurface(command=("habitat", "learnings"), help="""List the learnings agents stored, with their states.

States: pending (to review), approved (an insight note in the vault), rejected
(its reason kept), demoted-pending (pending, not learned again for 7 days),
demoted-rejected (rejected over 90 days ago). Nothing is ever deleted. Due
demotions and the statuses edited in insight notes are applied first."""),
)


@attrs.frozen(kw_only=True)
class ApproveParams:
    """What ``habitat approve`` takes."""

    id: str = param(help="The learning's id (or its first 4+ characters).", min_length=1,
                    max_length=64, cli=CliParam(positional=True))


def run_approve(ctx: Any, p: ApproveParams) -> Envelope[Any]:
    """``learnings_ops.approve``."""
    from plugins.habitat.learnings_ops import approve

    result: Envelope[Any] = approve(ctx, p.id)
    return result


APPROVE = Operation(
    "habitat-approve", "Approve learning ID: it becomes an insight note in the vault.",
    ("Approve a learning: it is written as an insight note and given to agents whose "
     "sessions it matches. Returns the learning and the note's path."),
    ApproveParams, run_approve, lazy_type(_OPS, "DecisionResult"), access="write", mcp=None,
    cli=CliSurface(command=("habitat", "approve"), help="""Approve learning ID: it becomes an insight note in the vault.

The note is resources/concepts/insights/<slug>.md with `status: approved`.
Edit that line in Obsidian to change your mind (rejected, or pending); agents
get approved insights that match their project at session start."""),
)


@attrs.frozen(kw_only=True)
class RejectParams:
    """What ``habitat reject`` takes."""

    id: str = param(help="The learning's id (or its first 4+ characters).", min_length=1,
                    max_length=64, cli=CliParam(positional=True))
    reason: str = param(help="Why it is rejected (one line, kept with the learning).",
                        min_length=1, max_length=500, cli=CliParam(positional=True))


def run_reject(ctx: Any, p: RejectParams) -> Envelope[Any]:
    """``learnings_ops.reject``."""
    from plugins.habitat.learnings_ops import reject

    result: Envelope[Any] = reject(ctx, p.id, p.reason)
    return result


REJECT = Operation(
    "habitat-reject", "Reject learning ID, keeping REASON; an insight it had says so.",
    ("Reject a learning with a reason, which is kept. Returns the learning."),
    RejectParams, run_reject, lazy_type(_OPS, "DecisionResult"), access="write", mcp=None,
    cli=CliSurface(command=("habitat", "reject"), literal_args=True, help="""Reject learning ID, keeping REASON; an insight it had says so.

A rejected learning is demoted after 90 days (never deleted). If agents keep
learning it, it comes back to review after 3 more recurrences, with REASON shown."""),
)


@attrs.frozen(kw_only=True)
class InsightsParams:
    """What ``habitat insights`` / ``echo_habitat_insights`` take."""

    cwd: str = param("", help="The session's working folder (its project is the "
                     "repository holding it). On the CLI: the current folder.",
                     max_length=4096, cli=CliParam(metavar="DIR"))
    project: str = param("", help="The project's name, when cwd does not say it.",
                         max_length=200, cli=CliParam(short="-p", metavar="NAME"))
    prompt: str = param("", help="What the session is asked to do (its first prompt).",
                        max_length=10000, cli=CliParam(metavar="TEXT"))
    entities: tuple[str, ...] = _names("Names of people, projects or things the session is "
                                       "about.")


def _with_cwd(values: Mapping[str, Any]) -> Mapping[str, Any]:
    out = dict(values)
    if not out.get("cwd"):
        out["cwd"] = os.getcwd()
    return out


def render_insights(env: Envelope[Any]) -> str:
    """The block as a session gets it, then what was searched."""
    r = env.data
    lines = [r.text] if r.text else []
    lines += [f"  ! {p}" for p in r.problems]
    lines.append(env.message)
    return "\n".join(lines)


def run_insights(ctx: Any, p: InsightsParams) -> Envelope[Any]:
    """``insight_context.select_insights`` in an envelope."""
    from plugins.habitat.insight_context import MAX_TOKENS, select_insights

    result = select_insights(ctx, cwd=p.cwd, project=p.project, prompt=p.prompt,
                             entities=p.entities)
    count = len(result.insights)
    message = (f"{count} insight{'' if count == 1 else 's'} ({result.tokens} of {MAX_TOKENS} "
               "tokens) "
               f"for {result.query.splitlines()[0] if result.query else 'an empty situation'!r}")
    return Envelope(True, "listed", message, result)


INSIGHTS = Operation(
    "habitat-insights", "Show the approved insights that match a project and prompt.",
    ("Get the insights the operator approved that match a session's situation (at most "
     "5, within 500 tokens): what agents learned before about this project. Use it at the "
     "start of a session, as Claude Code's SessionStart hook does. Returns the text block "
     "and each insight's id, text and score."),
    InsightsParams, run_insights, lazy_type("plugins.habitat.insight_context",
                                            "InsightsResult"),
    access="write", render=render_insights, mcp=McpSurface(tool="echo_habitat_insights"),
    cli=CliSurface(command=("habitat", "insights"), prepare=_with_cwd,
                   help="""Show the approved insights that match a project and prompt.

The same block Claude Code's SessionStart hook adds to a new session: the
approved insights ranked by recall for the project (the repository holding
--cwd, default the current folder), the prompt and the entities, at most 5
and at most 500 tokens."""),
)
