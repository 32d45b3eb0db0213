"""``inbox review`` (the MCP ``echo_inbox_review``), declared once: the bulk review of
every waiting inbox item (issue 16 item 6; the rules in ``echo_core.ops.inbox_review``)."""

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
from echo_core.verbs.groups import INBOX_HELP as GROUP_HELP
from echo_core.verbs.render_kit import outcome_lines
from echo_core.verbs.triage_verbs import TriageProposal

_LABEL_WIDTH = 10


@attrs.frozen(kw_only=True)
class ReviewDecision(TriageProposal):
    """What to do with one waiting inbox line: a triage proposal, or expire."""

    action: Literal["stay", "expire"] = param(  # type: ignore[assignment]
        "stay", help="'stay': keep it waiting; 'expire': strike it as expired.")


@attrs.frozen(kw_only=True)
class InboxReviewParams:
    """What ``inbox review`` / ``echo_inbox_review`` take."""

    decisions: tuple[Mapping[str, Any], ...] = param(
        (), help="Your decisions for some lines; the rules propose the rest.",
        max_length=200, cli=CliParam(from_prepare=True, bounds=Bounds(max_length=10000)),
        items=ReviewDecision)
    expire_after: int = param(30, help="Expire waiting items older than this many days.",
                              ge=1, le=3650)
    apply: bool = param(False, help="false previews (default); true writes.", cli=CliParam(
        help="Do what the review proposes (default: a dry-run preview that writes nothing)."))


def _read_decisions(values: Mapping[str, Any]) -> Mapping[str, Any]:
    from echo_core.ops.triage import proposal_list, read_proposals

    out = dict(values)
    source = out.pop("decisions_file", None)
    if source is not None:
        raw = read_proposals(read_text_source(source, "--decisions"))
        out["decisions"] = list(proposal_list(raw))
    return out


def _render_item(item: Any) -> list[str]:
    label = item.proposal.ljust(_LABEL_WIDTH)
    target = f" -> {item.path}" if item.path else ""
    detail = f": {item.detail}" if item.outcome in ("error", "gated") and item.detail else ""
    lines = [f"  [{item.index}] {label} {item.line}{target}",
             f"      why: {item.reason} (outcome: {item.outcome}{detail})"]
    for c in item.candidates:
        lines.append(f"      candidate: {c['slug']}  {c['path']}  (score {c['score']})")
    return lines


def render_review(env: Envelope[Any]) -> str:
    """Each waiting item: the proposal, why, and what came of it."""
    data = env.data
    if not data.items:
        return "Nothing waiting in the inbox: nothing to review."
    lines = outcome_lines(env, _render_item)
    if any(i.proposal == "needs-kind" for i in data.items):
        how = ("pass decisions" if current_surface() == "mcp"
               else "pass --decisions FILE (see `inbox review --help`)")
        lines.append(f"Items marked needs-kind keep waiting: {how} to promote them.")
    if not data.applied and any(i.proposal != "needs-kind" for i in data.items):
        lines.append(f"Run again with {spell('apply')} to do it.")
    return "\n".join(lines)


def run_review(ctx: Any, p: InboxReviewParams) -> Envelope[Any]:
    """``ops.inbox_review.review_inbox``."""
    from echo_core.ops.inbox_review import review_inbox

    decisions = [dict(d) for d in p.decisions] if p.decisions else None
    return review_inbox(ctx, decisions, expire_after=p.expire_after, apply=p.apply)


def review_access(p: InboxReviewParams) -> Access:
    """A write only when applying."""
    return "write" if p.apply else "read"


INBOX_REVIEW = Operation(
    "inbox-review", "Review every waiting inbox item: merge, expire or promote. Dry run by default.",
    ("Review the whole inbox at once: for each waiting item it proposes merge (its title "
     "names an entity), expire (older than expire_after days; struck, never deleted), "
     "promote or stay (from your decisions), else needs-kind. Preview first, then call "
     "again with apply=true. Returns each item's proposal, reason and outcome."),
    InboxReviewParams, run_review, lazy_type("echo_core.ops.inbox_review", "InboxReviewResult"),
    access=review_access, render=render_review,
    mcp=McpSurface(tool="echo_inbox_review"),
    cli=CliSurface(command=("inbox", "review"), group_help=GROUP_HELP,
                   extra=(CliArg("decisions_file", "Your decisions: a JSON file, or - for "
                                 "stdin.", metavar="FILE|-", required=False,
                                 flag="--decisions"),),
                   prepare=_read_decisions, help="""Review every waiting inbox item: merge, expire or promote. Dry run by default.

\b
Example:
  echo-memory inbox review                     # preview the rules' steps
  echo-memory inbox review --decisions d.json  # your decisions, then rules
  echo-memory inbox review --decisions d.json --apply

\b
For each waiting item, the first rule that applies:
  decision    yours, for that exact line (see below)
  done        routed but not struck (an apply stopped before striking it):
              struck with the day of its audit line, nothing routed again;
              a line added again after it was struck is a new item
  merge       its title (text up to " — ") is an entity's name, slug or alias:
              that note gets a dated bullet with the rest of the text
  expire      older than --expire-after days (30): struck as expired today,
              "- ~~2025-12-01: old idea~~ (expired 2026-03-01)"; never deleted
  needs-kind  none of these: it keeps waiting until you decide

\b
Decisions use the `triage apply` format, plus "action": "expire":
  [{"line": "- 2026-02-20: met Ada at the engine demo",
    "title": "Ada Lovelace", "kind": "person"},
   {"line": "- 2026-02-21: Vantage renewal", "title": "Vantage",
    "kind": "company", "merge_into": "vantage-systems"},
   {"line": "- 2026-01-05: old printer idea", "action": "expire"},
   {"line": "- 2026-02-22: call the bank", "action": "stay"}]

Difference from `triage apply`: triage routes only the lines you list; review
proposes a step for every waiting line and can expire. Both strike the lines they
route (processed) in inbox/captures/inbox.md and write audit lines to
inbox/processing-log/<today>.md. Without --apply nothing is written.

Exit 2 when the decisions are invalid (the message names the field, e.g.
decisions[1].action); gated and error items are reported and exit 0."""),
    fresh="quick",
)
