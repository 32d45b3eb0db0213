"""Insight injection: the approved insights that match a session's situation, budgeted.

The situation (what a session start knows): ``cwd``, the ``project`` (default: the
name of the nearest folder above ``cwd`` holding ``.git``, else ``cwd``'s own name), the
first ``prompt`` when there is one, and recent ``entities`` (names the brief mentions).
Its words are the query (``situation_query``); the insight ranker (``insight_ranker``)
ranks the approved insight notes for it; hits under ``RELATIVE_FLOOR`` of the best are
dropped (a hit on a lone common word next to real matches). Only the insights of the
situation's project and those that name none are candidates (``insight_ranker``): an
insight note's ``project`` is the project it was learned in (its words in another
project's prompt do not bring it there); a situation without a project gets only those
that name none. Insights written before notes named a project name none: every project.

The block: ``HEADER``, then one line per insight, best first,
``- <its text> (insight <id>, learned <n>x)``, while there are at most ``MAX_INSIGHTS``
(5) and the whole block, header included, is at most ``MAX_TOKENS`` (500) estimated
tokens (``insight_tokens``) and, when the caller gives one, ``budget_chars``. The first
insight that does not fit is cut (marked …) when ``MIN_PIECE_TOKENS`` still fit, and
the block ends there. Nothing matches: no block.

Before ranking, due decays run and the insight notes are synced (``insight_sync``), so an
insight a person rejected in Obsidian is not injected at the next session start.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from plugins.habitat.insight_tokens import estimate_tokens
from plugins.habitat.project_names import project_of

__all__ = ["HEADER", "MAX_INSIGHTS", "MAX_TOKENS", "InjectedInsight", "InsightsResult",
           "project_of", "select_insights", "session_context"]

MAX_INSIGHTS = 5
MAX_TOKENS = 500
RELATIVE_FLOOR = 0.2
MIN_PIECE_TOKENS = 30
#: The most of a long prompt that is searched.
QUERY_PROMPT_CHARS = 1000
#: The most entity names taken from the situation.
MAX_ENTITIES = 20
HEADER = ("Insights the operator approved from earlier sessions of this habitat (list them "
          "with `echo-memory habitat insights`):")


@attrs.frozen
class InjectedInsight:
    """One insight given to a session: its learning, note, the text given, its score,
    estimated tokens and recurrence."""

    id: str
    path: str
    text: str
    score: float
    tokens: int
    recurrence: int = 0
    cut: bool = False


@attrs.frozen
class InsightsResult:
    """The insights for a situation: the ``query`` searched, the ``project`` it named,
    the insights given (best first), the ``text`` block (empty when none) and its
    estimated ``tokens``; ``problems`` the sync met."""

    query: str
    project: str
    insights: tuple[InjectedInsight, ...] = ()
    text: str = ""
    tokens: int = 0
    problems: tuple[str, ...] = ()


def situation_query(project: str, prompt: str, entities: Sequence[str]) -> str:
    """The words searched for a situation: the project, the prompt's start, the
    entities."""
    parts = [project, prompt[:QUERY_PROMPT_CHARS], *list(entities)[:MAX_ENTITIES]]
    return "\n".join(p for p in parts if p and p.strip())


def _line(text: str, learning_id: str, recurrence: int) -> str:
    flat = " ".join(text.split())
    return f"- {flat} (insight {learning_id}, learned {recurrence}x)"


def _cut_to(line: str, tokens: int) -> str:
    """``line`` cut at a word so that it, with "…", costs at most ``tokens``."""
    words = line.split(" ")
    lo, hi = 0, len(words)
    while lo < hi:  # the most words that fit
        mid = (lo + hi + 1) // 2
        if estimate_tokens(" ".join(words[:mid]) + "…") <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]).rstrip(" ,;:.") + "…"


def pack(candidates: Sequence[tuple[str, str, int, float, str]],
         budget_chars: int | None = None) -> tuple[tuple[InjectedInsight, ...], str, int]:
    """The block for ``candidates`` ((id, text, recurrence, score, path), best first):
    the insights kept, the text and its tokens (module docstring)."""
    kept: list[InjectedInsight] = []
    lines = [HEADER]
    used = estimate_tokens(HEADER)
    chars = len(HEADER)
    char_cap = budget_chars if budget_chars is not None else None
    for learning_id, text, recurrence, score, path in candidates:
        if len(kept) >= MAX_INSIGHTS:
            break
        line = _line(text, learning_id, recurrence)
        cost = estimate_tokens(line)
        room = MAX_TOKENS - used
        cut = False
        if cost > room or (char_cap is not None and chars + 1 + len(line) > char_cap):
            if room < MIN_PIECE_TOKENS:
                break
            line = _cut_to(line, room)
            if char_cap is not None and chars + 1 + len(line) > char_cap:
                line = line[: max(0, char_cap - chars - 2)].rstrip() + "…"
            if len(line) < 20:
                break
            cost, cut = estimate_tokens(line), True
        lines.append(line)
        used += cost
        chars += 1 + len(line)
        kept.append(InjectedInsight(learning_id, path, text, round(score, 6), cost,
                                    recurrence, cut))
        if cut:
            break
    if not kept:
        return (), "", 0
    return tuple(kept), "\n".join(lines), used


def select_insights(ctx: Any, *, cwd: str = "", project: str = "", prompt: str = "",
                    entities: Sequence[str] = (), budget_chars: int | None = None
                    ) -> InsightsResult:
    """The insights for a situation (module docstring). Runs due decays and the sync of
    the insight notes first."""
    from plugins.habitat.insight_ranker import rank_insights
    from plugins.habitat.insight_sync import sync_insights
    from plugins.habitat.learnings_ops import open_store

    project = project.strip() or project_of(cwd)
    query = situation_query(project, prompt, entities)
    store = open_store(ctx)
    store.decay(ctx.today(), ctx.now())
    report = sync_insights(ctx, store)
    if not query:
        return InsightsResult(query, project, problems=report.problems)
    hits = rank_insights(ctx, store, report.notes, query, MAX_INSIGHTS * 4, project)
    if not hits:
        return InsightsResult(query, project, problems=report.problems)
    floor = RELATIVE_FLOOR * hits[0][1]
    candidates = []
    for note, score in hits:
        if score < floor or not note.text:
            continue
        learning = report.learnings.get(note.learning_id)
        if learning is None or learning.state != "approved":
            continue
        candidates.append((learning.id, note.text, learning.recurrence, score, note.path))
    kept, text, tokens = pack(candidates, budget_chars)
    return InsightsResult(query, project, kept, text, tokens, report.problems)


def session_context(ctx: Any, *, cwd: str = "", project: str = "", prompt: str = "",
                    entities: Sequence[str] = (), budget_chars: int | None = None,
                    **more: Any) -> list[str] | None:
    """The habitat's ``register_session_contexts`` provider: the insight block for the
    session starting, or None when no approved insight matches (at once when no
    learning was ever stored: the store is not even created)."""
    from plugins.habitat.learnings_ops import open_store

    if not open_store(ctx).exists():
        return None
    result = select_insights(ctx, cwd=cwd, project=project, prompt=prompt,
                             entities=entities, budget_chars=budget_chars)
    return [result.text] if result.text else None
