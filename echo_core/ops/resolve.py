"""``resolve`` (SPEC §2.3) and ``link`` (SPEC §2.4)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from echo_core.actions import Action
from echo_core.edit_retry import planned_again_if_edited
from echo_core.entities import Match, content_hash, entity_names
from echo_core.errors import EchoError, not_found, usage_error
from echo_core.models import Entity, Envelope
from echo_core.names import name_key, slugify
from echo_core.ops.links import link_reciprocally
from echo_core.ops.telemetry import record_resolve_event
from echo_core.ops.write_intent import StagedVault, commit, new_op_id
from echo_core.protocols import EntityLookup
from echo_core.write_scope import require_note_path

if TYPE_CHECKING:
    from echo_core.context import EchoContext


@attrs.frozen
class ResolveResult:
    """A match, or a miss with a suggested slug and fuzzy candidates."""

    match: bool
    slug: str | None = None
    path: str | None = None
    kind: str | None = None
    title: str | None = None
    aliases: tuple[str, ...] = ()
    suggest_slug: str | None = None
    candidates: tuple[dict[str, Any], ...] = ()
    #: the name is a title or alias of several entities of one kind: no match, and the
    #: ``candidates`` (score 1.0) are all those it names; a slug picks one
    ambiguous: bool = False


def resolve(ctx: EchoContext, mention: str, *, kind: str | None = None) -> Envelope[ResolveResult]:
    """Resolve ``mention`` exactly, else return fuzzy candidates (a miss with candidates
    is logged). Exact, best first: the slug as written; a title or alias (case, hyphen,
    space and punctuation variants); then a slug read as words."""
    mention = mention.strip()
    if not mention:
        raise usage_error("mention: give a name to resolve")
    if kind is not None:
        ctx.manifest.route(kind)
    index = ctx.entity_names  # a few indexed lookups, never the whole index
    with index.one_snapshot():
        found = _resolve(ctx, index, mention, kind)
    path = found.data.path
    if path is not None and not ctx.vault.storage.exists(path):
        # an entity index older than the notes (restored, checked out): heal that entry
        from echo_core.ops.freshness import freshness_off
        from echo_core.ops.index_sync import sync_paths

        if freshness_off(ctx):
            return found

        sync_paths(ctx, [path])
        with index.one_snapshot():
            found = _resolve(ctx, index, mention, kind)
    return found


def _answering(index: EntityLookup, mention: str, kind: str | None) -> list[Entity]:
    """Every entity ``mention`` names, best first: the slug as written, then those whose
    title has its name key, then those with such an alias (each by slug), then a slug read
    as words; the same order for any case of ``mention``."""
    key = name_key(mention)
    exact = index.get(mention)
    named = sorted(index.named(mention, kind=kind),
                   key=lambda e: (name_key(e.title) != key, e.slug))
    found = [exact] if exact is not None and kind in (None, exact.kind) else []
    found += [e for e in named if e not in found]
    return found or index.exact(mention, kind=kind)


def _same_kind(found: list[Entity]) -> list[Entity]:
    """Those of ``found`` that share their kind with another of them (by slug): a name
    that several entities of one kind answer to names none of them for sure (``--kind``
    cannot choose; their slugs do)."""
    kinds = [e.kind for e in found]
    return sorted((e for e in found if kinds.count(e.kind) > 1), key=lambda e: e.slug)


#: The most candidates an ambiguous name lists (a title every weekly meeting has).
AMBIGUOUS_SHOWN = 20


def _ambiguous(mention: str, found: list[Entity]) -> Envelope[ResolveResult]:
    """No match: ``mention`` names several entities of one kind (SPEC §2.3; inbox review
    keeps such an item waiting the same way). Every entity it names is a candidate."""
    several = _same_kind(found)
    ordered = several + [e for e in found if e not in several]
    candidates = tuple(Match(e, 1.0).to_candidate() for e in ordered[:AMBIGUOUS_SHOWN])
    kind = several[0].kind
    names = ", ".join(f"{e.slug} ({e.title!r}, {e.path})" for e in several[:CLOSEST])
    if len(several) > CLOSEST:
        names += f" and {len(several) - CLOSEST} more"
    return Envelope(True, Action.MISS,
                    f"{mention!r} is ambiguous: it names {len(several)} entities of kind "
                    f"{kind} ({names}); give the slug of the one you mean",
                    ResolveResult(False, candidates=candidates, ambiguous=True))


def _resolve(ctx: EchoContext, index: EntityLookup, mention: str,
             kind: str | None) -> Envelope[ResolveResult]:
    found = _answering(index, mention, kind)
    exact = index.get(mention)  # the slug as written names one entity, whatever else does
    if _same_kind(found) and (exact is None or found[0] != exact):
        return _ambiguous(mention, found)
    if found:
        e, others = found[0], found[1:6]
        also = tuple({"slug": o.slug, "path": o.path, "kind": o.kind, "title": o.title,
                      "score": 1.0} for o in others)
        result = ResolveResult(True, e.slug, e.path, e.kind, e.title, e.aliases,
                               candidates=also)
        names = ", ".join(f"{o.title} ({o.kind}, {o.path})" for o in others)
        more = f" (also answers to it: {names}; --kind picks one)" if others else ""
        return Envelope(True, Action.RESOLVED, f"{mention!r} -> {e.path}{more}", result)
    candidates = _closest(index, mention, kind)
    if candidates:
        record_resolve_event(ctx, {"event": "miss", "mention": mention,
                                   "candidates": [c["slug"] for c in candidates]})
    result = ResolveResult(False, suggest_slug=_suggested_slug(mention), candidates=candidates)
    hint = f"; closest: {candidates[0]['title']}" if candidates else ""
    return Envelope(True, Action.MISS, f"no entity named {mention!r}{hint}", result)


#: How many fuzzy matches a miss ranks by spelling before it keeps the best ``CLOSEST``.
POOL = 100
CLOSEST = 5


def _closest(index: EntityLookup, mention: str, kind: str | None) -> tuple[dict[str, Any], ...]:
    """The ``CLOSEST`` fuzzy candidates: by token score, then by how alike the spelling
    is (a name most like the mention: "Hanna Smith" for "Hana Smith" before "Ada
    Smith", which shares as many words), then by slug."""
    from difflib import SequenceMatcher  # only on a miss

    key = name_key(mention)
    matcher = SequenceMatcher(None, b=key, autojunk=False)

    def alike(match: Match) -> float:
        best = 0.0
        for name in entity_names(match.entity):
            matcher.set_seq1(name_key(name))
            best = max(best, matcher.ratio())
        return best

    ranked = sorted(index.fuzzy(mention, kind=kind, limit=POOL),
                    key=lambda m: (-m.score, -alike(m), m.entity.slug))
    return tuple(m.to_candidate() for m in ranked[:CLOSEST])


def _suggested_slug(mention: str) -> str | None:
    """The slug a capture of ``mention`` would start from; None when it names nothing."""
    try:
        return slugify(mention)
    except EchoError:
        return None


@attrs.frozen
class LinkResult:
    """The two notes linked and whether anything changed."""

    a: str
    b: str
    changed: bool


#: Folders whose files are not notes to link: templates (every new note of a kind copies
#: its template, links and all) and the inbox (items waiting, and their processing log).
NOT_LINKED_FOLDERS = ("templates/", "inbox/")


def _locate(ctx: EchoContext, index: EntityLookup, ref: str) -> str:
    """A vault path for ``ref``: an existing note path in the write scope (SPEC §1.4), or
    an exactly resolvable name."""
    if ref.endswith(".md"):
        path = require_note_path(ref)
        if path.casefold().startswith(NOT_LINKED_FOLDERS):
            raise usage_error(f"{path} is not a note of the memory to link (templates are "
                              "patterns every new note copies; the inbox holds items, "
                              "linked once triaged); link the notes themselves")
        if not ctx.vault.storage.exists(path):
            raise not_found(f"no note at {path!r}")
        return path
    found = ([index.get(ref)] if index.get(ref) else []) or index.exact(ref)
    if not found:
        raise not_found(f"{ref!r} is neither a note path nor a known entity; try "
                        f"`echo-memory resolve {ref!r}`")
    if len(found) > 1:
        names = ", ".join(e.slug for e in found if e)
        raise usage_error(f"{ref!r} names several entities ({names}); give a slug or path")
    entity: Entity | None = found[0]
    assert entity is not None
    return entity.path


def _linked(ctx: EchoContext, index: EntityLookup, path_a: str, path_b: str) -> bool:
    """Add the links of ``link`` to both notes as one operation (``write_intent``: both
    written or neither, each only while it holds what was read, so a person's save
    meanwhile raises ``EditedMeanwhile`` with nothing written); False when both already
    link to each other."""
    stage = StagedVault(ctx)
    text_a, changed = link_reciprocally(stage, path_a, stage.storage.read(path_a), path_b)
    if not changed:
        return False
    stage.write_note(path_a, text_a)
    refreshed = [attrs.evolve(entity, h=content_hash(stage.storage.read(path)))
                 for path in (path_a, path_b) if (entity := index.by_path(path)) is not None]
    commit(ctx, stage, refreshed, new_op_id())
    return True


def link(ctx: EchoContext, a: str, b: str) -> Envelope[LinkResult]:
    """Add reciprocal ``## Related`` links between two notes (paths or names)."""
    with ctx.vault.storage.lock(), ctx.entity_names.one_snapshot():
        index = ctx.entity_names
        path_a, path_b = _locate(ctx, index, a), _locate(ctx, index, b)
        if path_a == path_b:
            raise usage_error(f"cannot link {path_a} to itself")
        changed = planned_again_if_edited(lambda: _linked(ctx, index, path_a, path_b))
    message = f"linked {path_a} <-> {path_b}" if changed else f"{path_a} and {path_b} already linked"
    return Envelope(True, Action.LINKED if changed else Action.UNCHANGED, message,
                    LinkResult(path_a, path_b, changed))

