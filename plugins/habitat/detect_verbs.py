"""The detect verbs, declared once: ``habitat patterns``, ``habitat pattern``,
``habitat batches``, ``habitat batch`` and ``habitat flag`` (CLI, and MCP tools
``echo_habitat_*``). Their work is in ``patterns_ops``."""

from __future__ import annotations

from typing import Any, Literal

import attrs

from echo_core import Access, CliParam, CliSurface, Envelope, McpSurface, Operation, param
from plugins.habitat.patterns_report import (
    BatchesResult,
    BatchResult,
    FlagResult,
    PatternResult,
    PatternsResult,
    render_batch,
    render_batches,
    render_flag,
    render_pattern,
    render_patterns,
)

_GROUP = ("habitat",)


@attrs.frozen(kw_only=True)
class PatternsParams:
    """What ``habitat patterns`` takes."""

    scan: bool = param(False, help="First distil the last --days of the record into the "
                       "registry (idempotent: records already scanned add nothing).")
    days: int = param(7, help="Days of the record a scan reads, today included.", ge=1,
                      le=366)
    status: Literal["monitoring", "actionable", "proposed_fix", "fixed", "dismissed"] | None = param(
        None, help="Only patterns of this status.")
    batch_size: int = param(8, help="Failures per batch when a scan opens a new batch.",
                            ge=1, le=100)


def run_patterns(ctx: Any, p: PatternsParams) -> Envelope[Any]:
    """``patterns_ops.list_patterns``."""
    from plugins.habitat.patterns_ops import list_patterns

    return list_patterns(ctx, scan=p.scan, days=p.days, status=p.status,
                         batch_size=p.batch_size)


def patterns_access(p: PatternsParams) -> Access:
    """A scan writes the registry; a listing reads."""
    return "write" if p.scan else "read"


PATTERNS = Operation(
    "habitat-patterns", "List the failure patterns found in the record (--scan: find new ones first).",
    ("List the habitat's failure patterns: recurring tool-error streaks, stuck loops, "
     "abandoned tasks, operator frustration and flagged turns, each with its status, "
     "severity, recurrence and evidence (record ids). Use scan=true to distil the recent "
     "record first. Returns the patterns and counts per status."),
    PatternsParams, run_patterns, PatternsResult, access=patterns_access,
    render=render_patterns, mcp=McpSurface(tool="echo_habitat_patterns"),
    cli=CliSurface(command=(*_GROUP, "patterns"), help="""List the failure patterns found in the record (--scan: find new ones first).

A scan reads the loom's last --days day files and finds, per session: >= 3
consecutive failed tool calls, stuck loops (>= 3 near-identical calls with the same
outcome), abandoned tasks (the session ended with its last prompt unanswered),
operator frustration in prompts, and flag records. Each failure is an occurrence of
the pattern of its signature (kind + tool + normalised error), in a batch of 8.
Scanning the same records again adds nothing.

\b
Examples:
  echo-memory habitat patterns --scan
  echo-memory habitat patterns --status actionable --json"""),
)


@attrs.frozen(kw_only=True)
class PatternParams:
    """What ``habitat pattern`` takes."""

    id: str = param(help="A pattern id (p-...) or a unique prefix of one.", min_length=1,
                    max_length=100, cli=CliParam(positional=True))
    status: Literal["monitoring", "actionable", "proposed_fix", "fixed", "dismissed"] | None = param(
        None, help="Move the pattern to this status (monitoring -> actionable | dismissed; "
        "actionable -> proposed_fix | monitoring | dismissed; proposed_fix -> fixed | "
        "actionable | dismissed; fixed -> actionable; dismissed -> monitoring).")
    note: str = param("", help="Why the status changes (kept in its history); with "
                      "status proposed_fix, the fix proposed; from proposed_fix to fixed or "
                      "actionable, how the fix went.", max_length=500)


def run_pattern(ctx: Any, p: PatternParams) -> Envelope[Any]:
    """``patterns_ops.show_pattern``."""
    from plugins.habitat.patterns_ops import show_pattern

    return show_pattern(ctx, p.id, status=p.status, note=p.note)


def pattern_access(p: PatternParams) -> Access:
    """Moving a status writes; showing reads."""
    return "read" if p.status is None else "write"


PATTERN = Operation(
    "habitat-pattern", "Show one pattern with its evidence (--status: move it).",
    ("Show one failure pattern with every occurrence, its evidence records (text, result, "
     "error) and its status history; with status, move it (e.g. dismissed, or "
     "actionable). Returns the pattern, occurrences and transitions."),
    PatternParams, run_pattern, PatternResult, access=pattern_access, render=render_pattern,
    mcp=McpSurface(tool="echo_habitat_pattern"),
    cli=CliSurface(command=(*_GROUP, "pattern"), help="""Show one pattern with its evidence (--status: move it).

\b
Examples:
  echo-memory habitat pattern p-1d857dbe40
  echo-memory habitat pattern p-1d85 --status dismissed --note "flaky CI\""""),
)


@attrs.frozen(kw_only=True)
class BatchesParams:
    """``habitat batches`` takes nothing."""


def run_batches(ctx: Any, p: BatchesParams) -> Envelope[Any]:
    """``patterns_ops.batches``."""
    from plugins.habitat.patterns_ops import batches

    return batches(ctx)


BATCHES = Operation(
    "habitat-batches", "List the batches of failures found (8 per batch).",
    ("List the batches failures are grouped in for review (default 8 per batch), with "
     "their kinds. Use echo_habitat_batch to read one. Returns every batch."),
    BatchesParams, run_batches, BatchesResult, render=render_batches,
    mcp=McpSurface(tool="echo_habitat_batches"),
    cli=CliSurface(command=(*_GROUP, "batches")),
)


@attrs.frozen(kw_only=True)
class BatchParams:
    """What ``habitat batch`` takes."""

    id: str = param(help="A batch id from `habitat batches` (b0001, ...).", min_length=1,
                    max_length=20, cli=CliParam(positional=True))


def run_batch(ctx: Any, p: BatchParams) -> Envelope[Any]:
    """``patterns_ops.batch``."""
    from plugins.habitat.patterns_ops import batch

    return batch(ctx, p.id)


BATCH = Operation(
    "habitat-batch", "Show one batch of failures with their records.",
    ("Show one batch of failures: each item's kind, summary, session, pattern and its "
     "evidence records (text, result, error). Use it to distil what went wrong. Returns "
     "the batch and its items."),
    BatchParams, run_batch, BatchResult, render=render_batch,
    mcp=McpSurface(tool="echo_habitat_batch"),
    cli=CliSurface(command=(*_GROUP, "batch")),
)


@attrs.frozen(kw_only=True)
class FlagParams:
    """What ``habitat flag`` takes."""

    session: str = param(help="The session id (or a unique prefix of 4+ characters).",
                         min_length=1, max_length=200, cli=CliParam(positional=True))
    turn: str = param(help="N (the session's N-th prompt, 1 = the first) or a record id.",
                      min_length=1, max_length=200, cli=CliParam(positional=True))
    note: str = param("", help="What went wrong (flags with the same note form one "
                      "pattern).", max_length=2000,
                      cli=CliParam(positional=True, variadic=True, metavar="[NOTE]..."))


def run_flag(ctx: Any, p: FlagParams) -> Envelope[Any]:
    """``patterns_ops.flag_turn``."""
    from plugins.habitat.patterns_ops import flag_turn

    return flag_turn(ctx, p.session, p.turn, p.note)


FLAG = Operation(
    "habitat-flag", "Flag a turn of a session as a failure (a flag record + pattern evidence).",
    ("Flag one turn of a recorded session as going wrong: turn is N (the N-th prompt) or "
     "a record id. The flag is recorded and becomes evidence of the pattern that already "
     "holds that turn, or of a new flagged pattern. Returns the pattern and its evidence."),
    FlagParams, run_flag, FlagResult, access="write", render=render_flag,
    mcp=McpSurface(tool="echo_habitat_flag"),
    cli=CliSurface(command=(*_GROUP, "flag"), help="""Flag a turn of a session as a failure (a flag record + pattern evidence).

TURN is N, the session's N-th prompt (1 = its first), or a record id of the session.
A turn spans its prompt and what follows up to the next prompt. The flag is a `flag`
record in the loom (agent `operator`); it goes to the pattern that already holds a
record of the turn, else to a new `flagged` pattern named by the note. Flagging the
same turn with the same note again changes nothing.

\b
Example:
  echo-memory habitat flag 5f0c9a 3 "edited the wrong file again\""""),
)
