"""Phrase expansions in recall (SPEC §3.1, alias expansion).

An expander term whose text holds a space is a *phrase*: the tokens of a name, in order
(``"kappa engin"`` for the title "Kappa Engine"). A phrase never reaches the ranker
whole:

* its tokens boost, at the phrase's weight, the documents the query's own words found
  (``boost_only``), so "VS Corp pricing" ranks the pricing notes that say "Vantage
  Systems" higher;
* a document that none of the query's words matched comes in only when its indexed text
  holds the whole phrase, tokens adjacent and in order. An alias query ("turbokappa")
  finds the entity and the notes that name it ("Kappa Engine"), never the notes that
  merely share one word of its title ("engine").

Cost: one extra ranker search when the query has phrases (over-fetching ``OVERFETCH``
times the limit), and tokenizing the candidates it returns that the first search had
not found and that score high enough to make the limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import attrs

from echo_core.corpus import index_doc
from echo_core.notes import parse_note
from echo_core.protocols import WeightedTerm

if TYPE_CHECKING:
    from echo_core.context import EchoContext

#: Candidates fetched per kept hit by the phrase search (most share one word only).
OVERFETCH = 3


@attrs.frozen
class Phrase:
    """A multi-token expansion: its text (tokens joined by spaces), tokens, weight and
    the note it ``names`` (``WeightedTerm.names``)."""

    text: str
    tokens: tuple[str, ...]
    weight: float
    names: str = ""


def split_phrases(extra: Iterable[WeightedTerm]) -> tuple[list[WeightedTerm], list[Phrase]]:
    """The expansion terms of one token (kept as they are) and the phrases."""
    words: list[WeightedTerm] = []
    phrases: list[Phrase] = []
    for term in extra:
        tokens = tuple(term.term.split())
        if len(tokens) > 1:
            phrases.append(Phrase(" ".join(tokens), tokens, term.weight, term.names))
        elif tokens:
            words.append(term)
    return words, phrases


def boost_terms(phrases: Sequence[Phrase], own: set[str]) -> list[WeightedTerm]:
    """Each phrase token that is not already a query term, boost-only at the phrase's
    weight, naming what the phrase names."""
    out: dict[str, WeightedTerm] = {}
    for phrase in phrases:
        for token in phrase.tokens:
            if token not in own and token not in out:
                out[token] = WeightedTerm(token, phrase.weight, boost_only=True,
                                            names=phrase.names)
    return list(out.values())


def holds_phrase(tokens: Sequence[str], phrase: Sequence[str]) -> bool:
    """Whether ``phrase`` occurs in ``tokens`` as adjacent tokens, in order."""
    width = len(phrase)
    first = phrase[0]
    return any(tokens[i] == first and tuple(tokens[i:i + width]) == tuple(phrase)
               for i in range(len(tokens) - width + 1))


def phrase_hits(ctx: EchoContext, phrases: Sequence[Phrase], seen: set[str], limit: int,
                floor: float = 0.0) -> list[tuple[str, float]]:
    """Documents outside ``seen`` whose indexed text holds a whole phrase, as ``(path,
    score)`` best first (at most ``limit``): the ranker's score for the phrase tokens.
    Candidates scoring under ``floor`` (the score they would have to beat to be kept)
    are not read."""
    if not phrases:
        return []
    weights: dict[str, float] = {}
    for phrase in phrases:
        for token in phrase.tokens:
            weights[token] = max(weights.get(token, 0.0), phrase.weight)
    found = ctx.ranker_upkeep.search([WeightedTerm(t, w) for t, w in weights.items()],
                                     limit * OVERFETCH)
    candidates = [(path, score) for path, score in found
                  if path not in seen and score >= floor]
    texts = ctx.vault.storage.read_many([path for path, _ in candidates])
    kept: list[tuple[str, float]] = []
    for path, score in candidates:
        text = texts.get(path)
        doc = index_doc(parse_note(path, text)) if text is not None else None
        if doc is None:
            continue
        tokens = ctx.tokenizer.tokenize(doc.text)
        if any(holds_phrase(tokens, phrase.tokens) for phrase in phrases):
            kept.append((path, score))
            if len(kept) >= limit:
                break
    return kept
