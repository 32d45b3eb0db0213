"""``habitat digest`` (MCP ``echo_habitat_digest``), declared once; the work is in
``digest_note``."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core import Access, CliParam, CliSurface, Envelope, McpSurface, Operation, param

__all__ = ["DIGEST", "DigestParams"]


@attrs.frozen(kw_only=True)
class DigestParams:
    """What ``habitat digest`` takes."""

    date: str | None = param(None, help="The day, YYYY-MM-DD (default today).",
                             min_length=10, max_length=10, cli=CliParam(metavar="YYYY-MM-DD"))
    dry_run: bool = param(False, help="Show the digest; scan nothing, write nothing.")


def run_digest(ctx: Any, p: DigestParams) -> Envelope[Any]:
    """``digest_note.write_digest`` for ``p.date`` (default today)."""
    import datetime as _dt

    from echo_core import usage_error
    from plugins.habitat.digest_note import write_digest

    try:
        day = _dt.date.fromisoformat(p.date) if p.date else ctx.today()
    except ValueError:
        raise usage_error(f"date: {p.date!r} is not a day; give YYYY-MM-DD") from None
    return write_digest(ctx, day, dry_run=p.dry_run)


def digest_access(p: DigestParams) -> Access:
    """Writing the note is a write; a dry run reads."""
    return "read" if p.dry_run else "write"


def render_digest(env: Envelope[Any]) -> str:
    """The message, then the note's text."""
    body = env.data.text.split("\n---\n", 1)[-1]
    return f"{env.message}\n\n{body.rstrip()}"


def _result() -> type:
    from plugins.habitat.digest_note import DigestResult

    return DigestResult


DIGEST = Operation(
    "habitat-digest", "Write today's habitat digest note (learnings to approve, patterns, ...).",
    ("Write (or show, with dry_run) the habitat's daily digest: learnings waiting for "
     "approval, suggested insights (recurring or flagged), failure patterns seen that day, "
     "batches and cross-agent connections. It is a vault note, rewritten when run again the "
     "same day. Returns its parts and text."),
    DigestParams, run_digest, _result, access=digest_access, render=render_digest,
    mcp=McpSurface(tool="echo_habitat_digest"),
    cli=CliSurface(command=("habitat", "digest"), help="""Write today's habitat digest note (learnings to approve, patterns, ...).

The note is _agent/memory/episodic/habitat-digest-YYYY-MM-DD.md. It lists the
learnings waiting for approval, suggested insights (learnings learned 3+ times,
patterns that recurred 3+ times or were flagged), the failure patterns seen that
day (after a scan of that day and the one before), the batches they are in, and
records of different agents within 24 h naming the same entity or tag. Running it
again the same day rewrites the same note.

\b
Examples:
  echo-memory habitat digest
  echo-memory habitat digest --date 2026-03-01 --dry-run"""),
)
