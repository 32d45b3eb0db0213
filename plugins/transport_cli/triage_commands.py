"""``triage``: list the inbox and route agreed items through capture (SPEC §2.5)."""

from __future__ import annotations

from typing import Any

import click

from echo_core.cli_kit import (
    LiteralArgsCommand,
    common_options,
    current_context,
    emit,
    read_text_source,
)
from echo_core.models import Envelope

_LABEL_WIDTH = 9


def _render_list(env: Envelope) -> str:
    items = env.data.items
    if not items:
        return "The inbox is empty."
    lines = [f"{env.message}:"]
    for item in items:
        age = f"{item.age_days}d"
        lines.append(f"  {item.date}  {age:>5}  {item.text}")
    lines.append("Route items with `echo-memory triage apply PROPOSALS.json` "
                 "(see `triage apply --help`).")
    return "\n".join(lines)


def _render_outcome(outcome: Any) -> list[str]:
    label = outcome.classification.ljust(_LABEL_WIDTH)
    target = f" -> {outcome.path}" if outcome.path else ""
    lines = [f"  [{outcome.index}] {label} {outcome.line}{target}"]
    if outcome.classification in ("error", "gated", "done") and outcome.detail:
        lines.append(f"      {outcome.detail}")
    for c in outcome.candidates:
        lines.append(f"      candidate: {c['slug']}  {c['path']}  (score {c['score']})")
    return lines


def _render_apply(env: Envelope) -> str:
    data = env.data
    if not data.items:
        return "No proposals: nothing to do."
    head = "Applied:" if data.applied else "Preview (nothing written):"
    lines = [head]
    for outcome in data.items:
        lines += _render_outcome(outcome)
    lines.append(env.message)
    if not data.applied and any(o.classification in ("create", "update") for o in data.items):
        lines.append("Re-run with --apply to route them.")
    return "\n".join(lines)


@click.group("triage")
def triage_group() -> None:
    """Process the inbox: list its items, then route them into notes.

    \b
    Workflow:
      echo-memory triage list --json              see the items (exact lines, ages)
      echo-memory triage apply proposals.json     preview what would happen
      echo-memory triage apply proposals.json --apply

    Originals always stay in inbox/captures/inbox.md; each routed item gets an audit
    line in inbox/processing-log/<today>.md, so re-applying never routes it twice.
    """


@triage_group.command("list")
@common_options
def triage_list(as_json: bool) -> None:
    """List the inbox items: date, age in days and text (reads only).

    Each item's `line` (in --json) is the exact inbox line to copy into a proposal.
    A missing inbox is simply empty.
    """
    from echo_core.ops.triage import list_inbox

    emit(list_inbox(current_context()), as_json, _render_list)


@triage_group.command("apply", cls=LiteralArgsCommand)
@click.argument("proposals_file", metavar="PROPOSALS.json|-")
@click.option("--apply", "do_apply", is_flag=True,
              help="Route the items for real (default: a dry-run preview that writes nothing).")
@common_options
def triage_apply(proposals_file: str, do_apply: bool, as_json: bool) -> None:
    """Route inbox items as PROPOSALS say (a file, or - for stdin). Dry run by default.

    \b
    The file is a JSON list (or {"proposals": [...]}) of objects like:
      [{"line": "- 2026-02-20: met Ada at the engine demo",
        "title": "Ada Lovelace", "kind": "person",
        "body": "Met her at the engine demo.", "tags": ["contacts"]},
       {"line": "- 2026-02-21: Vantage renewal", "title": "Vantage Systems",
        "kind": "company", "merge_into": "vantage-systems"},
       {"line": "- 2026-02-22: call the bank", "action": "stay"}]

    \b
    Keys: line (required, copied exactly from `triage list --json`), title, kind
    (null = stay), body (default: the item's text), tags, aliases, sources, status,
    date (default: the item's date), domain, merge_into, force, action ("stay").

    Each item is classified: create, update, stay, gated (the duplicate gate objects:
    add "merge_into": SLUG, or "force": true if it really is new), done (already routed)
    or error (e.g. the line is not in the inbox; the other items still go ahead).
    Without --apply nothing is written. With --apply, each create/update goes through
    capture and gets an audit line in inbox/processing-log/<today>.md. The originals
    stay in the inbox: deleting them is a separate, explicit step.

    Exit 2 when the file itself is invalid (the message names the field, e.g.
    proposals[1].colour); gated and error items are reported and exit 0.
    """
    from echo_core.ops.triage import apply_proposals, read_proposals

    text = read_text_source(proposals_file, "PROPOSALS.json|-")
    result = apply_proposals(current_context(), read_proposals(text), apply=do_apply)
    emit(result, as_json, _render_apply)


def add_to(cli: click.Group) -> None:
    """Attach this module's commands to ``cli``."""
    cli.add_command(triage_group)
