"""``sweep`` (the MCP ``echo_sweep``), declared once (SPEC §5.1): the full sweep, or
with ``fast`` the index-only fast sweep; ``decay`` adds the lifecycle step (SPEC §2.7)."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.errors import usage_error
from echo_core.models import Envelope
from echo_core.operations import CliParam, CliSurface, Operation, param
from echo_core.verbs.skill_texts import SWEEP_SKILL


@attrs.frozen(kw_only=True)
class SweepParams:
    """What ``sweep`` / ``echo_sweep`` take."""

    apply: bool = param(False, help="Make the changes (full sweep); false (default) only "
                        "reports what would change.", cli=CliParam(
                            help="Make the changes (default: a dry run that writes nothing)."))
    fast: bool = param(False, help="Run the fast, index-only sweep instead: re-index notes "
                       "that are new, changed or gone; no apply needed.")
    all_shards: bool = param(False, help="With fast: verify every note's hash, not only "
                             "today's shard.")
    decay: bool = param(False, help="Also decay: archive expired working notes, move old "
                        "Observations to their yearly archive, move projects to the folder "
                        "of their status, propose stale projects for on-hold.")
    projects: tuple[str, ...] = param((), help="With decay and apply: the stale projects "
                                      "(slugs the dry run proposes, or all) to put on hold.",
                                      max_length=200, cli=CliParam(split_commas=True,
                                                                   metavar="SLUG,..."))


def render_sweep(env: Envelope[Any]) -> str:
    """``ops.sweep.render.render_sweep``."""
    from echo_core.ops.sweep.render import render_sweep as render

    return render(env)


def run_sweep(ctx: Any, p: SweepParams) -> Envelope[Any]:
    """``ops.fast_sweep.fast_sweep`` with ``fast``, else ``ops.sweep.full_sweep``.
    Errors: 2 naming the field for decay with fast, or projects without decay."""
    if p.fast and p.decay:
        raise usage_error("decay: is part of the full sweep; drop fast")
    if p.projects and not p.decay:
        raise usage_error("projects: confirms decay's on-hold proposals; add decay "
                          "(`echo-memory sweep --decay --apply --projects SLUG`)")
    if p.fast:
        from echo_core.ops.fast_sweep import fast_sweep  # type: ignore[import-not-found,unused-ignore]

        envelope: Envelope[Any] = fast_sweep(ctx, all_shards=p.all_shards)
        return envelope
    from echo_core.ops.sweep import full_sweep

    return full_sweep(ctx, apply=p.apply, decay=p.decay, projects=p.projects)


def _sweep_result() -> type:
    from echo_core.ops.sweep import SweepResult

    return SweepResult


SWEEP = Operation(
    "sweep", "Make the indexes, frontmatter and links agree with the notes (dry run).",
    ("Repair the vault from its notes: rebuild the entity and recall indexes, add missing "
     "frontmatter and reciprocal links, rewrite a damaged marker. Use it after notes were "
     "edited, added or deleted by hand, or when an index is damaged, and with decay=true to "
     "archive what expired (working notes, old Observations) and propose stale projects "
     "for on-hold; preview first, then call again with apply=true. Returns every change, "
     "grouped by kind."),
    SweepParams, run_sweep, _sweep_result, access="write", render=render_sweep,
    skill=SWEEP_SKILL, needs_vault=False,
    cli=CliSurface(help="""Make the indexes, frontmatter and links agree with the notes (dry run).

The full sweep reads every note once and reports each change it would make:
the entity index rebuilt from the notes (every note in a kind folder is an
entity: kind from the folder unless `type` says, title from the first heading
or the file name, aliases from `aliases`); frontmatter keys the kind requires
added one line each; missing reciprocal `## Related` links; a missing or damaged
marker rewritten, the schema stamped; aliases learned from resolve misses; the
recall index rebuilt. A damaged entities.json or journal is set aside as
<file>.corrupt-<time> (never deleted). Without --apply nothing is written.

--decay adds forgetting without loss (SPEC §2.7), its own report section:
expired working notes (checkpoints too) get status: archived, with a line
`## Archived YYYY-MM-DD` inserted after the title and the body kept byte for
byte below it; Observations beyond 30 move, oldest first, to
_agent/memory/episodic/observations-archive-YYYY.md (archive written first);
projects move to projects/<status>/ when their status says so; projects in
projects/active not updated for 30 days are only PROPOSED for on-hold: confirm
them with --projects SLUG,SLUG (or --projects all) together with --apply.
A moved project keeps its links: [[slug]] resolves anywhere, path-style links
([[projects/active/slug]]) in other notes are rewritten. Nothing is deleted.

--fast runs the index-only sweep instead: notes new, changed or gone since the
last one (plus today's verification shard; --all-shards checks every note) are
re-indexed or dropped from both indexes. It writes no note, so no --apply.

\b
Examples:
  echo-memory sweep               # what would change
  echo-memory sweep --apply       # make it so
  echo-memory sweep --fast --json
  echo-memory sweep --decay       # what would be archived, moved, proposed
  echo-memory sweep --decay --apply --projects website-redesign

Exit 0 when the sweep ran (dry run or not), 75 when the vault lock is held
(retry), 78 when the folder is not a vault or is of a newer schema."""),
)
