"""``heat``, declared once: what the always-load policy would promote or demote (issue 16,
item 4; the policy's numbers are in ``echo_core.ops.heat``). CLI only: SPEC §6.2's tool
list has no heat tool (``mcp=None``)."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import CliParam, CliSurface, Operation, param


@attrs.frozen(kw_only=True)
class HeatParams:
    """What ``heat`` / ``echo_heat`` take."""

    apply: bool = param(False, help="Set always_load on the notes promoted and remove it "
                        "from those demoted; false (default) only reports.", cli=CliParam(
                            help="Make the changes (default: a report that writes nothing)."))


def render_heat(env: Envelope[Any]) -> str:
    """The always-loaded notes, then promotions, demotions and notes left out."""
    r = env.data
    policy = (f"policy: promote at >= {r.min_hits} recall hits in {r.window_days} days, at "
              f"most {r.max_notes} notes within {r.budget_chars} characters of the brief; "
              f"demote after {r.window_days} days without a hit")
    lines = [policy]
    lines.append("always loaded now:" if r.always_load else "always loaded now: none")
    lines += [f"  {path}" for path in r.always_load]
    for title, changes in ((("promoted" if r.applied else "would promote"), r.promote),
                           (("demoted" if r.applied else "would demote"), r.demote),
                           ("left out", r.skipped)):
        if changes:
            lines.append(f"{title} ({len(changes)}):")
            lines += [f"  {c.path}  ({c.reason})" for c in changes]
    lines.append(env.message)
    return "\n".join(lines)


def run_heat(ctx: Any, p: HeatParams) -> Envelope[Any]:
    """``echo_core.ops.heat.heat``."""
    from echo_core.ops.heat import heat

    return heat(ctx, apply=p.apply)


def _heat_result() -> type:
    from echo_core.ops.heat import HeatResult

    return HeatResult


HEAT = Operation(
    "heat", "Show which notes recall use would promote to, or demote from, always-load.",
    ("Report which notes the always-load policy would add to every session brief (often "
     "recalled lately) or take out of it (not recalled for 30 days). Use it to review what "
     "the brief always shows; call with apply=true to set or clear always_load. Returns the "
     "always-loaded notes and each proposal with its hit count and reason."),
    HeatParams, run_heat, _heat_result,
    access=lambda p: "write" if p.apply else "read", render=render_heat, mcp=None,
    cli=CliSurface(help="""Show which notes recall use would promote to, or demote from, always-load.

A note whose frontmatter says `always_load: true` is shown in every brief
(`load --brief`, the SessionStart digest). Each recall counts its hits per note
in the state dir; heat reads those counts and proposes:

\b
  promote  a note with >= 5 recall hits in the last 30 days, most hits first,
           while at most 5 notes are always loaded and their texts fit a
           quarter of ECHO_LOAD_BUDGET; a note the brief would cut (over
           1200 characters) or one that does not fit what is left is
           listed under "left out" with the reason, and never marked;
  demote   an always-loaded note without a recall hit for 30 days (known as
           always-loaded for at least that long), or archived / superseded.

Nothing is written without --apply, which sets or removes the one
frontmatter line `always_load: true` (the prior text kept in `history`).

\b
Examples:
  echo-memory heat                # what would change
  echo-memory heat --apply        # make it so
  echo-memory heat --json"""),
)
