"""``recall`` and ``reindex``, declared once (SPEC §3.1)."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import Bounds, CliParam, CliSurface, McpParam, Operation, SkillSpec, param

MAX_QUERY = 2000


@attrs.frozen(kw_only=True)
class RecallParams:
    """What ``recall`` takes."""

    query: str = param(help="What to look for, in plain words.", min_length=1,
                       max_length=MAX_QUERY, cli=CliParam(positional=True, variadic=True))
    # SPEC §6.2: models get at most 20 primary hits; people on the CLI up to 50.
    limit: int = param(8, help="Most primary hits to return.", ge=1, le=50,
                       cli=CliParam(short="-n"), mcp=McpParam(bounds=Bounds(le=20)))
    include_linked: bool = param(True, help="Also return notes linked from the hits "
                                 "(labelled via).", cli=CliParam(flag="--no-linked", negate=True,
                                 help="Leave out notes linked from the hits."))
    budget_chars: int | None = param(None, help="Cap on the total excerpt characters; cut "
                                     "excerpts end with … and are marked truncated. Omit "
                                     "for no cap.", ge=500, le=20000, cli=CliParam(metavar="N"))
    as_of: str | None = param(None, help="Answer as the vault stood on this ISO date "
                              "(YYYY-MM-DD): notes created later left out, each hit current "
                              "or superseded then, rewritten notes by their version of then.",
                              max_length=10, cli=CliParam(metavar="YYYY-MM-DD"))
    explain: bool = param(False, help="Say why each hit was recalled: the query terms it "
                          "matched (with the note's words), the expansions and the entity "
                          "alias that brought them, the priors (kind, status, freshness) "
                          "and the links followed.")


def _validity(hit: Any) -> str:
    """`` (current then)`` / `` (superseded by X then)`` for an as-of hit."""
    if hit.validity is None:
        return ""
    if hit.validity == "superseded":
        return f"  (superseded by {hit.superseded_by or '?'} then)"
    return f"  ({hit.validity} then)"


def _why(hit: Any) -> list[str]:
    """The explanation lines of a hit (none without ``--explain``)."""
    if not hit.explain:
        return []
    from echo_core.ops.recall_explain import explain_lines

    return [f"         {line}" for line in explain_lines(hit.explain)]


def render_recall(env: Envelope[Any]) -> str:
    """Ranked hits with excerpts, then linked notes, then budget and expansion notes."""
    data = env.data
    if not data.primary and not data.terms and not data.expansions:
        return (f"no word of {data.query!r} is searched for (stopwords and one-letter "
                "words are left out): ask with other words")
    if not data.primary:
        return f"nothing in memory matches {data.query!r}"
    lines = []
    for hit in data.primary:
        lines.append(f"{hit.score:7.3f}  {hit.path}  [{hit.type or '-'}"
                     f"{', ' + hit.status if hit.status else ''}]{_validity(hit)}")
        if hit.excerpt:
            lines.append(f"         {hit.excerpt}")
        lines += _why(hit)
    if data.linked:
        lines.append("linked:")
        for hit in data.linked:
            lines.append(f"{hit.score:7.3f}  {hit.path}  (via {hit.via}){_validity(hit)}")
            if hit.excerpt:
                lines.append(f"         {hit.excerpt}")
            lines += _why(hit)
    if data.truncated:
        lines.append(f"(truncated to the budget; {data.dropped} more hits left out)")
    if data.expansions:
        lines.append(f"(expanded with: {', '.join(data.expansions)})")
    return "\n".join(lines)


def run_recall(ctx: Any, p: RecallParams) -> Envelope[Any]:
    """``echo_core.ops.recall.recall`` with the declared parameters (each hit explained
    with ``explain``: ``echo_core.ops.recall_explain``)."""
    if p.as_of is not None:
        from echo_core.ops.recall_as_of import parse_as_of, recall_as_of

        found = recall_as_of(ctx, p.query, parse_as_of(p.as_of), limit=p.limit,
                             include_linked=p.include_linked, budget_chars=p.budget_chars)
    else:
        from echo_core.ops.hit_counts import count_recall_hits  # hits per note, for heat
        from echo_core.ops.recall import recall

        found = count_recall_hits(ctx, recall(ctx, p.query, limit=p.limit,
                                              include_linked=p.include_linked,
                                              budget_chars=p.budget_chars))
    if not p.explain:
        return found
    from echo_core.ops.recall_explain import explained

    return explained(ctx, found)


@attrs.frozen(kw_only=True)
class ReindexParams:
    """``reindex`` takes nothing."""


def run_reindex(ctx: Any, p: ReindexParams) -> Envelope[Any]:
    """Rebuild the active ranker, reporting progress (``echo_core.progress``)."""
    from echo_core.ops.recall_index import reindex

    return reindex(ctx)


RECALL_SKILL = SkillSpec("recall", (
    "Search echo-memory for notes about a person, project, decision, preference or past "
    "session. Use before answering questions about earlier work or people, before redoing "
    "something that may have been decided already, and when the user asks what we know "
    "about X."), """
# Recall from memory

```bash
echo-memory recall $ARGUMENTS --budget-chars 1500
```

Results are ranked notes with an excerpt each, plus notes they link to. Read a whole note
with `echo-memory get PATH` (add `--json` for frontmatter). Words are stemmed and entity
aliases expand the query, so plain words work; try the person's or project's name, or two
or three key words.

The UserPromptSubmit hook already adds a few clearly relevant notes to each prompt; recall
explicitly when you need more, or something older. If nothing matches, say memory has
nothing on it rather than guessing.
""", argument_hint="<query>")


def _recall_result() -> type:
    from echo_core.ops.recall import RecallResult

    return RecallResult


def _reindex_result() -> type:
    from echo_core.ops.recall_index import ReindexResult

    return ReindexResult


RECALL = Operation(
    "recall",
    "Search memory for QUERY: ranked notes with excerpts, plus linked notes.",
    ("Search memory (entity notes, session logs, journal) for what is known about a "
     "topic. Use it before answering questions about past work, people, decisions or "
     "preferences. Returns ranked primary hits and linked notes with path, score and "
     "excerpt; budget_chars caps the excerpt text (cut ones are marked truncated)."),
    RecallParams, run_recall, _recall_result, access="read", profile="core", render=render_recall,
    cli=CliSurface(help="""Search memory for QUERY: ranked notes with excerpts, plus linked notes.

\b
Examples:
  echo-memory recall vantage pricing decision
  echo-memory recall "who is Ada" --limit 3 --json
  echo-memory recall deploy checklist --budget-chars 1500

Words are stemmed (deploys, deployed, deployment all match), entity aliases expand
the query, and fresher, active notes rank a little higher."""),
    skill=RECALL_SKILL,
    fresh="quick",
)

REINDEX = Operation(
    "reindex",
    "Rebuild the recall index from every note in the vault (with a progress bar).",
    ("Rebuild the recall index from every note in the vault. Use it only when recall misses "
     "notes that exist (after bulk edits outside echo-memory). Returns how many notes were "
     "indexed."),
    ReindexParams, run_reindex, _reindex_result, access="write", mcp=None,
    cli=CliSurface(help="""Rebuild the recall index from every note in the vault (with a progress bar).

Rarely needed: the index keeps itself current as notes are written and rebuilds
itself when missing. Use it after editing many notes outside echo-memory."""),
)
