"""How an entity's names are matched: the names it answers to, their exact-match keys and
name tokens, and the fuzzy score of a mention against them (the one rule of
``EntityIndex.fuzzy`` and of the name cache). Re-exported by ``echo_core.entities``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from echo_core.models import Entity
from echo_core.names import name_key, tokens_of_words, words


def entity_names(entity: Entity) -> list[str]:
    """Title then aliases: every name an entity answers to."""
    return [entity.title, *entity.aliases]


@attrs.frozen
class Match:
    """A fuzzy candidate: the entity and its name similarity."""

    entity: Entity
    score: float

    def to_candidate(self) -> dict[str, Any]:
        """The candidate shape of envelopes: slug, path, kind, title, score."""
        e = self.entity
        return {"slug": e.slug, "path": e.path, "kind": e.kind, "title": e.title,
                "score": round(self.score, 3)}


#: Per name of an entity (title, then aliases), its ``name_tokens``.
NameTokens = tuple[frozenset[str], ...]


def answering_to(mention: str, found: Iterable[Entity]) -> list[Entity]:
    """Those of ``found`` (``exact`` matches of ``mention``) whose title or an alias, not
    only the slug, has ``mention``'s name key (``EntityLookup.named``). A slug is made from
    a title, cut and suffixed, so another title can meet it ("Con Note" and the slug
    ``con-note`` of "Con"); callers that must not merge two names use this."""
    key = name_key(mention)
    return [e for e in found if any(name_key(n) == key for n in entity_names(e))]


def shared_name_tokens(tokens: frozenset[str], names: NameTokens) -> frozenset[str]:
    """The ``tokens`` of a mention that one of ``names`` (an entity's) holds too."""
    return frozenset(t for n in names for t in tokens & n)


def _tokens(name: str, parts: list[str]) -> frozenset[str]:
    """``tokens_of_words(parts)`` (``parts``: ``words(name)``), but a first "A." is an
    initial, not the article: "A. Smith" keeps its "a", else it is only "smith" and every
    other Smith contains it (token-set similarity 1.0: "Hana Smith" against it)."""
    if len(parts) > 1 and parts[0] == "a" and name.lstrip()[:2] in ("A.", "a."):
        return tokens_of_words(parts[1:]) | {"a"}
    return tokens_of_words(parts)


def matching_tokens(name: str) -> frozenset[str]:
    """The tokens a name is matched by (``name_tokens``, an initial "A." kept): of an
    entity's names and of a mention, the same rule on both sides."""
    return _tokens(name, words(name))


def entity_name_tokens(entity: Entity) -> NameTokens:
    """``matching_tokens`` of each of the entity's names, title first."""
    return tuple(matching_tokens(n) for n in entity_names(entity))


def entity_terms(entity: Entity) -> tuple[set[str], NameTokens]:
    """``(entity_keys(entity), entity_name_tokens(entity))``, each name folded once."""
    keys = {name_key(entity.slug)}
    names = []
    for name in entity_names(entity):
        parts = words(name)
        keys.add(" ".join(parts))
        names.append(_tokens(name, parts))
    keys.discard("")
    return keys, tuple(names)


def name_score(query_tokens: frozenset[str], names: NameTokens) -> float:
    """Fuzzy score of an entity for a mention: best ``token_set_similarity`` over its names
    (written out: it runs for every candidate of every recall's alias expansion)."""
    size = len(query_tokens)
    best = 0.0
    if not size:
        return best
    for name in names:
        if name:
            score = len(query_tokens & name) / (size if size < len(name) else len(name))  # noqa: FURB136 - no call
            if score > best:  # noqa: PLR1730 - no call
                best = score
    return best


def rank_matches(query_tokens: frozenset[str], candidates: Iterable[tuple[Entity, NameTokens]],
                 *, kind: str | None, min_score: float, limit: int) -> list[Match]:
    """Score candidates (entity, its name tokens) for a mention: those of ``kind`` (any when
    None) scoring >= ``min_score``, best first (ties by slug), at most ``limit``. The one
    scoring rule of ``EntityIndex.fuzzy`` and of the name cache."""
    matches = []
    for entity, names in candidates:
        if kind is not None and entity.kind != kind:
            continue
        score = name_score(query_tokens, names)
        if score >= min_score:
            matches.append(Match(entity, score))
    matches.sort(key=lambda m: (-m.score, m.entity.slug))
    return matches[:limit]


def candidate_tokens(query_tokens: frozenset[str], df: Callable[[str], int],
                     max_df: int | None) -> list[str]:
    """The query tokens that collect fuzzy candidates: all of them, or with ``max_df``
    only those naming at most ``max_df`` entities (a word in thousands of names says
    little about which entity is meant; scoring still uses every query token)."""
    if max_df is None:
        return sorted(query_tokens)
    return sorted(t for t in query_tokens if df(t) <= max_df)


def entity_keys(entity: Entity) -> set[str]:
    """The non-empty exact-match keys of an entity: its slug's, title's and aliases'."""
    keys = {name_key(entity.slug), *(name_key(n) for n in entity_names(entity))}
    keys.discard("")
    return keys
