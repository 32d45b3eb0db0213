"""The duplicate rules of SPEC §2.2.

A capture stops when an entity of the SAME kind

* scores >= ``THRESHOLD`` on token-set similarity of names (title + aliases, stopwords
  removed). When the names share a single token, that token must be unique to the entity
  in the vault (document frequency 1) to block: "Echo Plugin" is not stopped by "Echo
  Memory" when "echo" names several entities; or
* has a name the capture's title or an alias misspells by one letter (two in a long
  name): "Grace Hoper" next to "Grace Hopper" (``name_typos``); or
* already has the slug the new note would take (a person changed its title by hand: the
  note ``ada-lovelace.md`` now titled "Augusta Ada King"), which would otherwise give a
  second note ``ada-lovelace-2`` of the same kind beside it.

Dated kinds (meetings, decisions) only compare entities of the same date. Cross-kind
matches never stop a capture (the core reports them as near duplicates).

The stop's reason says what the capture looks like; the capture adds the ways forward in
the words of the surface it came from.
"""

from __future__ import annotations

from typing import Any

from echo_core import (
    CaptureRequest,
    Entity,
    GateContext,
    GateStop,
    Match,
    entity_names,
    name_key,
    slugify,
)
from plugins.gate_duplicate.name_typos import MAX_EDITS, typos_of

THRESHOLD = 0.8


def _same_day(entity: Entity, request: CaptureRequest, ctx: GateContext) -> bool:
    if not ctx.route.dated:
        return True
    day = request.date or (ctx.today.isoformat() if ctx.today else "")
    return entity.slug.startswith(day)


def _token_matches(name: str, request: CaptureRequest, ctx: GateContext) -> list[Match]:
    index = ctx.entities
    found = []
    for match in index.fuzzy(name, kind=request.kind, min_score=THRESHOLD, limit=10):
        if not _same_day(match.entity, request, ctx):
            continue
        shared = index.shared_tokens(name, match.entity)
        if len(shared) == 1 and index.document_frequency(next(iter(shared))) > 1:
            continue
        found.append(match)
    return found


def _typo_matches(name: str, request: CaptureRequest, ctx: GateContext) -> list[Match]:
    """Same-kind entities whose title or alias ``name`` misspells. Only names of a length
    within ``MAX_EDITS`` of it (each edit changes the length by one at most) and of its
    word count or letters (``name_typos``) can be, so only those are compared."""
    index = ctx.entities
    key = name_key(name)
    # a typo has the name's words (spacing aside): same word count, or the same letters
    near = index.name_keys_sized(len(key) - MAX_EDITS, len(key) + MAX_EDITS,
                                 spaces=key.count(" "), squashed=key.replace(" ", ""))
    typos = typos_of(key, near)
    by_key = index.slugs_by_keys(t.key for t in typos)
    found = []
    for typo in typos:
        for slug in sorted(by_key.get(typo.key, ())):
            entity = index.get(slug)
            if (entity is None or entity.kind != request.kind
                    or not _same_day(entity, request, ctx)
                    or typo.key not in {name_key(n) for n in entity_names(entity)}):
                continue
            found.append(Match(entity, typo.score))
    return found


def _named_matches(request: CaptureRequest, ctx: GateContext) -> dict[str, tuple[str, Match]]:
    """slug -> (the request's name that matched it, its best match)."""
    best: dict[str, tuple[str, Match]] = {}
    for name in (request.title, *request.aliases):
        for match in (*_token_matches(name, request, ctx), *_typo_matches(name, request, ctx)):
            slug = match.entity.slug
            if slug not in best or best[slug][1].score < match.score:
                best[slug] = (name, match)
    return best


def blocking_matches(request: CaptureRequest, ctx: GateContext) -> list[Match]:
    """Same-kind entities that make ``request`` a duplicate, best first."""
    found = [match for _name, match in _named_matches(request, ctx).values()]
    return sorted(found, key=lambda m: (-m.score, m.entity.slug))


def _slug_holder(request: CaptureRequest, ctx: GateContext) -> Entity | None:
    """The same-kind entity that already has the slug a new note of this title would take
    (dated kinds: with the day), in any case: its title was changed by hand, most likely
    (an exact title would have resolved to it), and a new note would be ``<slug>-2``
    beside it (or ``ada-lovelace.md`` beside ``Ada-Lovelace.md``: one file on a disk that
    ignores case)."""
    slug = slugify(request.title)
    if ctx.route.dated:
        slug = f"{request.date or (ctx.today.isoformat() if ctx.today else '')}-{slug}"
    entity = ctx.entities.get(slug) or next(  # a file renamed in case only: Ada-Lovelace.md
        (e for e in ctx.entities.exact(slug, kind=request.kind)
         if e.slug.casefold() == slug.casefold()), None)
    if entity is None or entity.kind != request.kind:
        return None
    # its own title no longer makes its slug (retitled by hand); a title that does (two
    # long titles cut to one slug) is another entity: it gets ``-2`` as before
    return entity if slugify(entity.title).casefold() != entity.slug.casefold() else None


def check_duplicate(request: Any, ctx: Any) -> GateStop | None:
    """A ``GateStop`` naming the candidates, or ``None``."""
    if not isinstance(ctx, GateContext) or not isinstance(request, CaptureRequest):
        return None
    named = _named_matches(request, ctx)
    holder = _slug_holder(request, ctx)
    if holder is not None and holder.slug not in named:
        return GateStop(
            reason=(f"{request.title!r} would be named {holder.slug!r}, the name of existing "
                    f"{holder.kind} {holder.title!r} ({holder.path}; its title was changed?)"),
            candidates=(Match(holder, 1.0).to_candidate(),))
    if not named:
        return None
    matches = sorted((m for _n, m in named.values()), key=lambda m: (-m.score, m.entity.slug))
    top = matches[0].entity
    name = named[top.slug][0]
    what = repr(request.title) if name == request.title else \
        f"{request.title!r} (by its alias {name!r})"
    reason = (f"{what} looks like existing {top.kind} {top.title!r} "
              f"({top.path}, score {matches[0].score:.2f})")
    return GateStop(reason=reason, candidates=tuple(m.to_candidate() for m in matches))
