"""``reflect`` (the MCP ``echo_reflect``), declared once (SPEC §4.4, §6.2): proposals
from a file, stdin or a mined transcript, classified, previewed, applied on request.

The CLI word ``reflect`` is also the group of ``reflect corpus`` and ``reflect
claude-memory`` (``plugins.transport_cli.default_group``): ``reflect FILE`` runs this
operation, ``reflect corpus ...`` the sub-command.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
from echo_core.text_source import read_text_source
from echo_core.verbs.render_kit import outcome_lines
from echo_core.verbs.skill_texts import REFLECT_SKILL

_LABEL_WIDTH = 19


@attrs.frozen(kw_only=True)
class ReflectProposalItem:
    """One thing learned, to be captured (SPEC §4.4)."""

    title: str = param(help="What to remember, one line.")
    body: str = param(help="What to record.")
    confidence: float = param(help="0..1: >= 0.85 high, >= 0.6 medium (captured with its "
                              "kind); below 0.6 goes to the inbox.", ge=0, le=1)
    kind: str = param("", help="The kind of note (see capture); 'semantic' for a "
                      "preference or fact. No kind: the inbox.")
    tags: tuple[str, ...] = param((), help="Tags.")
    aliases: tuple[str, ...] = param((), help="Other names.")
    sources: tuple[str, ...] = param((), help="Where it came from.")
    date: str = param("", help="ISO date YYYY-MM-DD.")
    supersedes: str = param("", help="The note (slug) or preference line it replaces: "
                            "the answer to a contradiction.")


@attrs.frozen(kw_only=True)
class ReflectParams:
    """What ``reflect`` / ``echo_reflect`` take."""

    proposals: tuple[Mapping[str, Any], ...] = param(
        (), help="The proposals (title, body, confidence; kind, tags, aliases, sources, "
        "date, supersedes).", max_length=500,
        cli=CliParam(from_prepare=True, bounds=Bounds(max_length=10000)),
        items=ReflectProposalItem)
    transcript: str = param("", help="Mine this Claude Code transcript (.jsonl).", mcp=None,
                            cli=CliParam(metavar="PATH", help="Mine this Claude Code "
                                         "transcript (.jsonl) for proposals instead."))
    apply: bool = param(False, help="false previews (default); true writes.", cli=CliParam(
        help="Write the proposals for real (default: a preview that writes nothing)."))


def _read_proposals(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """The CLI's ``reflect PROPOSALS|-`` (or ``--transcript PATH``, read by ``run``)."""
    from echo_core.errors import usage_error
    from echo_core.ops.reflect import read_proposals_json

    out = dict(values)
    source = out.pop("proposals_file", None)
    if source is not None and out.get("transcript"):
        raise usage_error("PROPOSALS: give a proposals file or --transcript, not both")
    if source is None and not out.get("transcript"):
        raise usage_error("PROPOSALS: give a proposals file (- for stdin) or --transcript "
                          "PATH; see `echo-memory reflect --help`")
    if source is not None:
        out["proposals"] = read_proposals_json(read_text_source(source, "PROPOSALS"))
    return out


def run_reflect(ctx: Any, p: ReflectParams) -> Envelope[Any]:
    """``ops.reflect.reflect`` of the proposals, or of those mined from ``transcript``."""
    from echo_core.ops.reflect import reflect
    from echo_core.ops.reflect_sources import transcript_proposals

    if p.transcript:
        proposals, origins = transcript_proposals(p.transcript)
        return reflect(ctx, proposals, apply=p.apply, origins=origins, source=p.transcript)
    return reflect(ctx, [dict(item) for item in p.proposals], apply=p.apply)


def reflect_access(p: ReflectParams) -> Access:
    """A write only when applying."""
    return "write" if p.apply else "read"


def render_item(item: Any) -> list[str]:
    """One proposal: classification, band, route, title, then where / why / evidence."""
    label = f"{item.classification:<{_LABEL_WIDTH}}"
    target = f" -> {item.path}" if item.path else ""
    lines = [f"  [{item.index}] {label} {item.band:<6} {item.route}: {item.title}{target}"]
    origin = item.origin
    if origin is not None and origin.rationale:
        seen = f" ({origin.occurrences}x)" if origin.occurrences > 1 else ""
        lines.append(f"      why: {origin.rationale}{seen}")
        lines += [f"      > {excerpt}" for excerpt in origin.excerpts]
    if item.classification in ("gated", "contradiction", "supersede-suggested", "error",
                               "unchanged", "queued") and item.detail:
        lines.append(f"      {item.detail}")
    for c in item.candidates:
        lines.append(f"      candidate: {c.get('slug')}  {c.get('path')}")
    return lines


def render_reflect(env: Envelope[Any]) -> str:
    """Each proposal's classification (preview) or outcome (apply), then the summary."""
    data = env.data
    if not data.items:
        return "No proposals: nothing to do."
    lines = outcome_lines(env, render_item)
    return "\n".join(lines)


REFLECT_HELP = """Capture what was learned: PROPOSALS (a JSON file, - for stdin) or --transcript.

\b
Examples:
  echo-memory reflect proposals.json          preview: how each is classified
  echo-memory reflect proposals.json --apply  write them through capture
  echo-memory reflect --transcript ~/.claude/projects/P/SESSION.jsonl
  echo-memory reflect corpus                  every transcript (see its help)

\b
PROPOSALS is a JSON list (or {"proposals": [...]}) of objects like:
  [{"title": "Use pytest, not unittest", "kind": "semantic",
    "body": "The operator prefers pytest.", "confidence": 0.9,
    "tags": ["testing"]},
   {"title": "Try a faster linter", "body": "Idea from the review.",
    "confidence": 0.4}]

\b
Keys: title, body, confidence (0..1) required; kind, tags, aliases, sources,
date, supersedes (the slug or preference line it replaces) optional.

\b
Confidence routing: high (>= 0.85) and medium (>= 0.6) are captured with
their kind; low (< 0.6), or no kind, goes to the inbox as
"- <today>: <title> — <first body line>".

\b
Preview (the default; nothing written) classifies each: create, update,
inbox, supersede, gated (the duplicate gate would stop it: its candidates),
supersede-suggested (it contradicts a line memory holds: add the
"supersedes" it shows to replace that line), unchanged (recorded already).
--apply captures each (created, updated, superseded, inbox, gated,
contradiction, queued, unchanged); a stop is reported, not an error, and
the others still go ahead. Applying the same proposals again changes nothing.

\b
--transcript mines a Claude Code transcript, no LLM: preferences stated
("always", "never", "I prefer", "use X not Y") high, corrections and
error-then-fix pairs medium, ideas low (inbox); each shown with why and
the words it came from.

Exit 2 for invalid proposals (the message names the field, e.g.
proposals[1].confidence); nothing is written then. Exit 1 when --apply
saved some but a proposal failed on its own (e.g. a supersedes naming no
note): the message names it, its item says why."""

REFLECT = Operation(
    "reflect", "Capture what was learned: PROPOSALS (a JSON file, - for stdin) or --transcript.",
    ("Record what a session learned (preferences, corrections, fixes, decisions) as "
     "proposals: each is classified against memory (create, update, inbox, gated, "
     "supersede-suggested) and written through capture only with apply=true; confidence "
     "below 0.6 goes to the inbox. Returns each proposal's classification and path."),
    ReflectParams, run_reflect, lazy_type("echo_core.ops.reflect", "ReflectResult"),
    access=reflect_access, render=render_reflect, mcp=McpSurface(tool="echo_reflect"),
    skill=REFLECT_SKILL,
    cli=CliSurface(extra=(CliArg("proposals_file", "The proposals: a JSON file, or - for "
                                 "stdin.", metavar="[PROPOSALS|-]", required=False),),
                   prepare=_read_proposals, literal_args=True, help=REFLECT_HELP),
    fresh="quick",
)
