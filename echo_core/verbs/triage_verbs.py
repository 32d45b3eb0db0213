"""``triage list`` and ``triage apply`` (the MCP ``echo_triage_inbox``), declared once
(SPEC §2.5)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from echo_core.models import Envelope
from echo_core.operations import (
    Access,
    Bounds,
    CliArg,
    CliParam,
    CliSurface,
    McpSurface,
    Operation,
    lazy_type,
    param,
)
from echo_core.operations.spelling import current_surface, spell
from echo_core.text_source import read_text_source
from echo_core.verbs.groups import TRIAGE_HELP as GROUP_HELP
from echo_core.verbs.render_kit import outcome_lines
from echo_core.verbs.skill_texts import TRIAGE_SKILL

_LABEL_WIDTH = 9


@attrs.frozen(kw_only=True)
class TriageProposal:
    """How to route one inbox line."""

    line: str = param(help="The exact inbox line, e.g. '- 2026-02-20: met Ada'.")
    title: str = param("", help="The entity's name.")
    kind: str | None = param(None, help="The kind of note (see capture); null = stay.")
    body: str = param("", help="What to record (default: the item's text).")
    tags: tuple[str, ...] = param((), help="Tags.")
    aliases: tuple[str, ...] = param((), help="Other names.")
    sources: tuple[str, ...] = param((), help="Where it came from.")
    status: str = param("", help="One word, e.g. active.")
    date: str = param("", help="ISO date (default: the item's date).")
    domain: str = param("", help="For kind area: its domain.")
    merge_into: str = param("", help="Slug of the existing note to update.")
    force: bool = param(False, help="Create even if the gate sees a duplicate.")
    action: Literal["stay"] = param("stay", help="'stay': leave the item in the inbox.")


@attrs.frozen(kw_only=True)
class TriageListParams:
    """``triage list`` takes nothing."""


def render_list(env: Envelope[Any]) -> str:
    """Each waiting inbox item: date, age, text."""
    items = env.data.items
    unread = getattr(env.data, "unread", ())
    not_items = [f"Not in the item form `- YYYY-MM-DD: text`, so not triaged ({len(unread)}):",
                 *(f"  {line}" for line in unread)] if unread else []
    if not items:
        processed = getattr(env.data, "processed", 0)
        return "\n".join([f"Nothing waiting in the inbox ({processed} processed: struck, kept "
                          "in the file)." if processed else "The inbox is empty.", *not_items])
    lines = [f"{env.message}:"]
    routed = {r.line: r for r in getattr(env.data, "routed", ())}
    for item in items:
        age = f"{item.age_days}d"
        lines.append(f"  {item.date}  {age:>5}  {item.text}")
        if (went := routed.get(item.line)) is not None:
            lines.append(f"      routed to {went.to} on {went.day}, not struck: an apply "
                         "naming this line strikes it (routes nothing again)")
    lines += not_items
    if current_surface() == "mcp":
        lines.append("Route items by calling echo_triage_inbox with proposals (a preview; "
                     "then again with apply: true).")
    else:
        lines.append("Route items with `echo-memory triage apply PROPOSALS.json` "
                     "(see `triage apply --help`).")
    return "\n".join(lines)


def run_list(ctx: Any, p: TriageListParams) -> Envelope[Any]:
    """``ops.triage.list_inbox``."""
    from echo_core.ops.triage import list_inbox

    return list_inbox(ctx)


TRIAGE_LIST = Operation(
    "triage-list", "List the inbox items: date, age in days and text (reads only).",
    ("List the waiting inbox items with their exact lines and ages. Use it before routing "
     "them. Returns the items."),
    TriageListParams, run_list, lazy_type("echo_core.ops.triage", "TriageList"),
    render=render_list, mcp=None,
    cli=CliSurface(command=("triage", "list"), group_help=GROUP_HELP, help="""List the inbox items: date, age in days and text (reads only).

\b
Example:
  echo-memory triage list --json

Each item's `line` (in --json) is the exact inbox line to copy into a proposal.
Lines struck as processed or expired ("- ~~2026-02-20: met Ada~~ → ...") stay
in the file but do not wait: they are counted (`processed`), not listed.
A line routed but not struck (an apply stopped before striking it, or its
strike removed by hand: its audit line in inbox/processing-log/ names no
strike of that day) is listed with where it went (in --json: `routed`);
the next apply naming it strikes it without routing it again. A line added
again after its routing was struck is a new waiting item.
A missing inbox is simply empty."""),
)


@attrs.frozen(kw_only=True)
class TriageParams:
    """What ``triage apply`` / ``echo_triage_inbox`` take."""

    proposals: tuple[Mapping[str, Any], ...] | None = param(
        None, help="How to route inbox items. Omit to list the inbox.", max_length=200,
        cli=CliParam(from_prepare=True, bounds=Bounds(max_length=10000)),
        items=TriageProposal)
    apply: bool = param(False, help="false previews (default); true writes.", cli=CliParam(
        help="Route the items for real (default: a dry-run preview that writes nothing)."))


def _read_proposals(values: Mapping[str, Any]) -> Mapping[str, Any]:
    from echo_core.ops.triage import proposal_list, read_proposals

    out = dict(values)
    raw = read_proposals(read_text_source(out.pop("proposals_file"), "PROPOSALS.json|-"))
    out["proposals"] = list(proposal_list(raw))
    return out


def _render_outcome(outcome: Any) -> list[str]:
    label = outcome.classification.ljust(_LABEL_WIDTH)
    target = f" -> {outcome.path}" if outcome.path else ""
    lines = [f"  [{outcome.index}] {label} {outcome.line}{target}"]
    if outcome.classification in ("error", "gated", "done") and outcome.detail:
        lines.append(f"      {outcome.detail}")
    for c in outcome.candidates:
        lines.append(f"      candidate: {c['slug']}  {c['path']}  (score {c['score']})")
    return lines


def render_triage(env: Envelope[Any]) -> str:
    """The inbox (no proposals), or each proposal's classification."""
    data = env.data
    if not hasattr(data, "applied"):
        return render_list(env)
    if not data.items:
        return "No proposals: nothing to do."
    lines = outcome_lines(env, _render_outcome)
    if not data.applied and any(o.classification in ("create", "update") for o in data.items):
        lines.append(f"Run again with {spell('apply')} to route them.")
    return "\n".join(lines)


def run_triage(ctx: Any, p: TriageParams) -> Envelope[Any]:
    """``list_inbox`` without proposals, else ``apply_proposals``."""
    from echo_core.ops.triage import apply_proposals, list_inbox

    if p.proposals is None:
        return list_inbox(ctx)
    return apply_proposals(ctx, [dict(item) for item in p.proposals], apply=p.apply)


def triage_access(p: TriageParams) -> Access:
    """A write only when applying proposals."""
    return "write" if p.apply and p.proposals else "read"


TRIAGE = Operation(
    "triage", "Route inbox items as PROPOSALS say (a file, or - for stdin). Dry run by default.",
    ("Work through the inbox: without proposals it lists the items (exact lines, ages); "
     "with proposals it routes each line to a note through capture. Preview first, then "
     "call again with apply=true. Returns each item's classification (create, update, "
     "stay, gated, done, error) and path."),
    TriageParams, run_triage, lazy_type("echo_core.ops.triage", "TriageApplyResult"),
    access=triage_access, profile="core", render=render_triage,
    mcp=McpSurface(tool="echo_triage_inbox"), skill=TRIAGE_SKILL,
    cli=CliSurface(command=("triage", "apply"), group_help=GROUP_HELP,
                   extra=(CliArg("proposals_file", "The proposals: a JSON file, or - for "
                                 "stdin.", metavar="PROPOSALS.json|-"),),
                   prepare=_read_proposals, literal_args=True, help="""Route inbox items as PROPOSALS say (a file, or - for stdin). Dry run by default.

\b
The file is a JSON list (or {"proposals": [...]}) of objects like:
  [{"line": "- 2026-02-20: met Ada at the engine demo",
    "title": "Ada Lovelace", "kind": "person",
    "body": "Met her at the engine demo.", "tags": ["contacts"]},
   {"line": "- 2026-02-21: Vantage renewal", "title": "Vantage Systems",
    "kind": "company", "merge_into": "vantage-systems"},
   {"line": "- 2026-02-22: call the bank", "action": "stay"}]

\b
Keys: line (required, copied exactly from `triage list --json`), title,
kind (null = stay), body (default: the item's text), tags, aliases, sources,
status, date (default: the item's date), domain, merge_into, force, action
("stay").

Each item is classified: create, update, stay, gated (the duplicate gate objects:
add "merge_into": SLUG, or "force": true if it really is new), done (already routed)
or error (e.g. the line is not in the inbox; the other items still go ahead).
A line routed before but not struck (`triage list` shows where it went) is done:
applying strikes it and routes nothing again.
Without --apply nothing is written. With --apply, each create/update goes through
capture and gets an audit line in inbox/processing-log/<today>.md. The originals
stay in the inbox, struck in place with their text kept (a ~ in it written \\~, a
trailing backslash doubled, so the strike holds), so they no longer wait (triage
list and the session brief count only waiting lines):

\b
  - ~~2026-02-20: met Ada~~ → resources/people/ada.md (processed 2026-03-01)

Nothing is deleted. A stay, gated or error item keeps waiting; a line added again
later, even with the same text, is a new waiting item. Re-applying the same file
does nothing (its items are done). `echo-memory inbox review` proposes a step for
every waiting item at once.

Exit 2 when the file itself is invalid (the message names the field, e.g.
proposals[1].colour); gated and error items are reported and exit 0."""),
    fresh="quick",
)
