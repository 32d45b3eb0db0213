"""Pairs of entities the duplicate gate would not have let both in (SPEC §2.2).

Two entities of the same kind look like duplicates when a name of one scores >= 0.8
on token-set similarity against the other's names (title + aliases, stopwords removed)
and, when they share a single token, that token names no third entity (inside the
vault both hold it, so "unique" is a document frequency of 2). Dated kinds compare
only entities of the same date. The gate's rule, applied with the core's own
``EntityIndex.fuzzy``, so the work stays bounded: candidates come only through tokens
naming at most ``MAX_DF`` entities (a word in hundreds of names says nothing about
which one is meant), never from all pairs. Kinds that expire (``working``: the hooks'
per-session checkpoints, "2026-03-01 checkpoint 0a1b2c3d" beside "... 9f8e7d6c") are
left out: such notes are alike on purpose and go on their own; merging them is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator

from echo_core.entities import EntityIndex
from echo_core.models import Entity
from echo_core.notes import wikilinks
from echo_core.ops.lint.model import Finding
from echo_core.ops.lint.snapshot import VaultSnapshot

THRESHOLD = 0.8
MAX_DF = 50
_LIMIT = 10


def _same_day(a: Entity, b: Entity, snap: VaultSnapshot) -> bool:
    route = snap.manifest.kinds.get(a.kind)
    return route is None or not route.dated or a.slug[:10] == b.slug[:10]


def _blocks(index: EntityIndex, tokens: frozenset[str], other: Entity) -> bool:
    shared = frozenset(t for name in index.name_tokens_of(other.slug) for t in tokens & name)
    return len(shared) != 1 or index.document_frequency(next(iter(shared))) <= 2


def duplicate_pairs(index: EntityIndex, snap: VaultSnapshot) -> Iterator[tuple[Entity, Entity, float]]:
    """Each pair (by slug order) once, with its best score. A name none of whose
    candidate tokens another entity holds (each rare token's frequency is 1: its own)
    can match nothing else, so it is not looked up at all (most names of a vault)."""
    df = index.document_frequency
    for entity in sorted(index.entities.values(), key=lambda e: e.slug):
        if entity.path not in snap.notes:
            continue  # index drift reports it
        route = snap.manifest.kinds.get(entity.kind)
        if route is not None and route.expires_days:
            continue  # working memory: per-session notes alike on purpose, gone on their own
        best: dict[str, tuple[Entity, float]] = {}
        for tokens in index.name_tokens_of(entity.slug):
            if not any(1 < df(t) <= MAX_DF for t in tokens):
                continue
            for match in index.fuzzy_tokens(tokens, kind=entity.kind, min_score=THRESHOLD,
                                            limit=_LIMIT, max_df=MAX_DF):
                other = match.entity
                if (other.slug <= entity.slug or other.path not in snap.notes
                        or not _same_day(entity, other, snap)
                        or not _blocks(index, tokens, other)):
                    continue
                if other.slug not in best or best[other.slug][1] < match.score:
                    best[other.slug] = (other, match.score)
        for other, score in sorted(best.values(), key=lambda item: item[0].slug):
            yield entity, other, score


def _linked_stems(snap: VaultSnapshot, entity: Entity) -> set[str]:
    """The note names the entity's ``supersedes`` and ``superseded_by`` link to."""
    note = snap.notes.get(entity.path)
    stems: set[str] = set()
    for key in ("supersedes", "superseded_by"):
        raw = note.frontmatter.get(key) if note is not None else None
        for value in raw if isinstance(raw, list) else [raw] if raw else []:
            for target in wikilinks(str(value)) or [str(value)]:
                name = target.split("|", 1)[0].split("#", 1)[0].strip()
                stems.add(name.rsplit("/", 1)[-1].removesuffix(".md"))
    return stems


def _stem(entity: Entity) -> str:
    return entity.path.rsplit("/", 1)[-1].removesuffix(".md")


def check_duplicates(snap: VaultSnapshot) -> Iterator[Finding]:
    """One finding per pair, on the first note (by slug), naming the other; none for a
    pair one of which supersedes the other (a fact that changed, both kept on purpose)."""
    if snap.index is None:
        return
    for a, b, score in duplicate_pairs(snap.index, snap):
        if _stem(b) in _linked_stems(snap, a) or _stem(a) in _linked_stems(snap, b):
            continue
        yield Finding("duplicate-entities", a.path,
                      f"{a.kind} {a.title!r} looks like {b.title!r} ({b.path}, score "
                      f"{score:.2f})",
                      "if they are one thing, merge the text into one note and delete "
                      "the other (add the lost name to `aliases`); if not, rename one",
                      other=b.path)
