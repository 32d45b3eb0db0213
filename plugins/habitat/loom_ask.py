"""``ask_habitat`` (MCP ``echo_ask_habitat``, CLI ``habitat ask``): search the record and
the learnings at once.

``ask_habitat(ctx, query, ...)`` merges the record's hits (``loom_search.search_hits``:
text, result and tags of every record, filtered by agent, kind and time window) with the
learnings' (``learning_search.learning_hits`` of the learn part: approved insights and
pending learnings). Each side brings at most ``limit`` hits, best first; a record hit
carries excerpts (text ``EXCERPT`` characters, result ``RESULT_EXCERPT``), not whole
tool outputs. The learnings get the same agent and time window (by the time they were
last updated); a ``kind`` filter, being a record kind, leaves them out. Without the learn part installed the
answer says so (``learnings_available`` false) and holds records only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from echo_core import (
    Bounds,
    CliParam,
    CliSurface,
    Envelope,
    McpParam,
    McpSurface,
    Operation,
    param,
)
from plugins.habitat.operations_index import GROUP_HELP
from plugins.habitat.record import KINDS, MAX_NAME, Record

__all__ = ["HABITAT_ASK", "AskResult", "RecordHit", "ask_habitat"]

EXCERPT = 400
RESULT_EXCERPT = 200
_KIND_CHOICES = ("", *sorted(KINDS))


@attrs.frozen(kw_only=True)
class RecordHit:
    """One record found: where it sits in the tree, excerpts of its text and result, its
    score (higher is better)."""

    id: str
    ts: str
    kind: str
    agent_id: str
    session_id: str
    parent_id: str | None
    text: str
    result: str
    is_error: bool
    duration_ms: int | None
    tags: tuple[str, ...]
    score: float

    @classmethod
    def of(cls, record: Record, score: float) -> RecordHit:
        """The hit of ``record``."""
        return cls(id=record.id, ts=record.ts, kind=record.kind, agent_id=record.agent_id,
                   session_id=record.session_id, parent_id=record.parent_id,
                   text=_excerpt(record.text, EXCERPT),
                   result=_excerpt(record.result, RESULT_EXCERPT), is_error=record.is_error,
                   duration_ms=record.duration_ms, tags=record.tags,
                   score=round(score, 4))


def _excerpt(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


@attrs.frozen(kw_only=True)
class AskResult:
    """The records and learnings found for ``query``."""

    query: str
    records: tuple[RecordHit, ...]
    learnings: tuple[Mapping[str, Any], ...]
    learnings_available: bool


def _learning_hits(ctx: Any, query: str, limit: int, agent_id: str | None,
                   since: str | None) -> tuple[list[dict[str, Any]], bool]:
    try:
        from plugins.habitat.learning_search import learning_hits
    except ImportError:
        return [], False
    return list(learning_hits(ctx, query, limit, agent_id=agent_id, since=since)), True


def ask_habitat(ctx: Any, query: str, limit: int = 10, *, agent_id: str | None = None,
                kind: str | None = None, since: str | None = None,
                until: str | None = None) -> Envelope[AskResult]:
    """Search the record and the learnings (module docstring). ``usage_error`` for a
    time bound that is no time."""
    from echo_core import usage_error
    from plugins.habitat.loom_search import search_hits, time_window

    try:
        low, high = time_window(since, until, ctx.now())
    except ValueError as exc:
        raise usage_error(f"since/until: {exc}") from None
    hits = search_hits(ctx, query, limit, agent_id=agent_id, kind=kind, since=low,
                       until=high, exact=True)
    learnings, available = ([], True) if kind else _learning_hits(ctx, query, limit,
                                                                     agent_id, low)
    if high is not None:
        learnings = [item for item in learnings if str(item.get("updated", "")) < high]
    result = AskResult(query=query, records=tuple(RecordHit.of(r, s) for r, s in hits),
                       learnings=tuple(learnings), learnings_available=available)
    found = f"{_count(len(result.records), 'record')}, " \
        f"{_count(len(result.learnings), 'learning')}"
    if not available:
        found += " (no learnings store installed)"
    return Envelope(True, "searched", f"{found} for {query!r}", result)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@attrs.frozen(kw_only=True)
class AskParams:
    """What ``ask_habitat`` takes: the query and its filters."""

    query: str = param(help="What to look for (words; every one is looked up).",
                       min_length=1, max_length=2000,
                       cli=CliParam(positional=True, variadic=True))
    limit: int = param(10, help="Most hits of each side (records, learnings).", ge=1, le=50,
                       mcp=McpParam(bounds=Bounds(le=20)))
    agent_id: str = param("", help="Only this agent's records and learnings.",
                          max_length=MAX_NAME, cli=CliParam(flag="--agent", metavar="ID"))
    kind: str = param("", help="Only records of this kind (learnings left out).",
                      choices=_KIND_CHOICES)
    since: str = param("", help="From this time: an ISO date or time, or a span back from "
                       "now (30m, 24h, 7d).", max_length=40)
    until: str = param("", help="Up to this time (a date: its whole day included).",
                       max_length=40)


def run_ask(ctx: Any, p: AskParams) -> Envelope[AskResult]:
    """``ask_habitat`` of the parameters."""
    return ask_habitat(ctx, p.query, p.limit, agent_id=p.agent_id or None,
                       kind=p.kind or None, since=p.since or None, until=p.until or None)


def render_ask(env: Envelope[Any]) -> str:
    """The message, each record hit on one line (time, agent, kind, text), then each
    learning (state, content)."""
    lines = [env.message]
    for hit in env.data.records:
        flag = " ERROR" if hit.is_error else ""
        text = " ".join(hit.text.split())[:120]
        lines.append(f"  {hit.ts[:19]} {hit.agent_id} {hit.kind}{flag} {hit.id}: {text}")
    for item in env.data.learnings:
        content = " ".join(str(item.get("content", "")).split())[:120]
        lines.append(f"  learning {item.get('id', '?')} [{item.get('state', '?')}]: {content}")
    return "\n".join(lines)


HABITAT_ASK = Operation(
    "habitat-ask", "Search what agents did (the record) and what they learned.",
    ("Search the habitat: the shared record of every agent's prompts, replies and tool "
     "calls, and the learnings they stored. Use it before repeating work or when a tool "
     "keeps failing, to see how others fared. Returns record hits (with session and "
     "parent ids) and learnings, best first."),
    AskParams, run_ask, AskResult, render=render_ask, needs_vault=False,
    mcp=McpSurface(tool="echo_ask_habitat"),
    cli=CliSurface(command=("habitat", "ask"), group_help=GROUP_HELP),
)
