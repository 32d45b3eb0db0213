"""The duplicate rules of SPEC §2.2.

A capture stops when an entity of the SAME kind scores >= ``THRESHOLD`` on token-set
similarity of names (title + aliases, stopwords removed). When the names share a single
token, that token must be unique to the entity in the vault (document frequency 1) to
block: "Echo Plugin" is not stopped by "Echo Memory" when "echo" names several entities.
Dated kinds (meetings, decisions) only compare entities of the same date. Cross-kind
matches never stop a capture (the core reports them as near duplicates).
"""

from __future__ import annotations

from typing import Any

from echo_core import CaptureRequest, GateContext, GateStop, Match

THRESHOLD = 0.8


def blocking_matches(request: CaptureRequest, ctx: GateContext) -> list[Match]:
    """Same-kind entities that make ``request`` a duplicate, best first."""
    index = ctx.entities
    best: dict[str, Match] = {}
    for name in (request.title, *request.aliases):
        for match in index.fuzzy(name, kind=request.kind, min_score=THRESHOLD, limit=10):
            entity = match.entity
            if ctx.route.dated:
                day = request.date or (ctx.today.isoformat() if ctx.today else "")
                if not entity.slug.startswith(day):
                    continue
            shared = index.shared_tokens(name, entity)
            if len(shared) == 1 and index.document_frequency(next(iter(shared))) > 1:
                continue
            if entity.slug not in best or best[entity.slug].score < match.score:
                best[entity.slug] = match
    return sorted(best.values(), key=lambda m: (-m.score, m.entity.slug))


def check_duplicate(request: Any, ctx: Any) -> GateStop | None:
    """A ``GateStop`` naming the candidates and the two ways forward, or ``None``."""
    if not isinstance(ctx, GateContext) or not isinstance(request, CaptureRequest):
        return None
    matches = blocking_matches(request, ctx)
    if not matches:
        return None
    top = matches[0].entity
    reason = (
        f"{request.title!r} looks like existing {top.kind} {top.title!r} "
        f"({top.path}, score {matches[0].score:.2f}). To add to it, capture again with "
        f"--merge-into {top.slug}; if it is really a different {request.kind}, use --force."
    )
    return GateStop(reason=reason, candidates=tuple(m.to_candidate() for m in matches))
