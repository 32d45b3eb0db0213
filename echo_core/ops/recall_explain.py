"""Why a note was recalled: ``explained(ctx, envelope)`` gives every hit of a recall its
``explain`` (SPEC §3.1's score, taken apart).

Worked out after the ranking, from what every ranker shares, so it holds for any ranker
and never changes an answer: the query's terms again (``query_terms``: the same tokenizer
and expanders), the note's searchable text (``corpus.index_doc``: title, aliases, tags and
body) and the priors of ``echo_core.scoring``. Each hit's ``explain`` (JSON-ready):

* ``rank`` and ``score`` (as ranked), ``ranker`` (the configured one);
* ``matched``: each query term the note holds, with the note's own words it stems from
  (at most ``MAX_WORDS``) and its weight; ``missing``: the query terms it lacks;
* ``expansions``: each expansion term the note holds (an entity's other name added by
  an expander) with ``source``, what brought it (e.g. the entity and the alias the query
  used), and the note's words;
* ``priors``: kind, corpus weight, status and its weight, ``updated`` and its freshness
  on the recall's day, and their product (the factor BM25 is multiplied by);
* ``key_fields``: the query terms and expansions the note's title or aliases hold and the
  factor recall's key-field boost multiplied the score by (``recall_fields``);
* ``named``: when the query names this very note (an expansion's ``WeightedTerm.names``:
  an entity whose whole name or alias the query holds), what says so, e.g. "entity
  'Vantage Systems', which the query names by its alias 'VSYS'"; else None. A ranker may
  treat it as the query's subject (``hybrid`` gives it no lift from meaning);
* ``hop``: 0 for a primary hit, else the number of links followed, and ``via``.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.models import Envelope, Hit

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.protocols import WeightedTerm

__all__ = ["MAX_WORDS", "explained"]

#: The note's words shown per matched term.
MAX_WORDS = 3
_WORD = re.compile(r"[^\W_]+")


def explained(ctx: EchoContext, envelope: Envelope[Any]) -> Envelope[Any]:
    """``envelope`` (a recall's) with an ``explain`` on every primary and linked hit."""
    from echo_core.ops.recall import query_terms

    result = envelope.data
    if result is None or not (result.primary or result.linked):
        return envelope
    plain, extra = query_terms(ctx, result.query)
    paths = [h.path for h in (*result.primary, *result.linked)]
    texts = ctx.vault.storage.read_many(paths)
    primary = {h.path for h in result.primary}
    today = ctx.today()

    def one(hit: Hit, rank: int) -> Hit:
        text = texts.get(hit.path)
        hop = 0 if hit.via is None else (1 if hit.via in primary else 2)
        why = _explain(ctx, hit, text, plain, extra, today)
        return attrs.evolve(hit, explain={"rank": rank, "score": hit.score,
                                          "ranker": ctx.ranker_upkeep.name, **why,
                                          "hop": hop, "via": hit.via})

    data = attrs.evolve(result,
                        primary=tuple(one(h, i + 1) for i, h in enumerate(result.primary)),
                        linked=tuple(one(h, i + 1) for i, h in enumerate(result.linked)))
    return attrs.evolve(envelope, data=data)


def _explain(ctx: EchoContext, hit: Hit, text: str | None, plain: Sequence[WeightedTerm],
             extra: Sequence[WeightedTerm], today: _dt.date) -> dict[str, Any]:
    words = _surface_words(ctx, _searchable(hit.path, text))
    matched, missing, expansions = [], [], []
    for term in plain:
        found = _found(term.term, words)
        if found:
            matched.append({"term": term.term, "words": found, "weight": term.weight})
        else:
            missing.append(term.term)
    for term in extra:
        found = _found(term.term, words)
        if found:
            expansions.append({"term": term.term, "words": found, "weight": term.weight,
                               "source": term.source or "an expander"})
    named = next((t.source or "an expander" for t in extra if t.names == hit.path), None)
    return {"matched": matched, "missing": missing, "expansions": expansions,
            "named": named, "priors": _priors(hit, today, text),
            "key_fields": _key_fields(ctx, hit.path, text, plain, extra)}


def _key_fields(ctx: EchoContext, path: str, text: str | None,
                plain: Sequence[WeightedTerm], extra: Sequence[WeightedTerm]
                ) -> dict[str, Any]:
    from echo_core.ops.recall_fields import boost_factor, key_matches, matched_count

    if text is None:
        return {"terms": [], "expansions": [], "boost": 1.0}
    found = key_matches(ctx, path, text, [t.term for t in plain], [t.term for t in extra])
    factor = boost_factor(ctx) ** matched_count(found)
    return {"terms": found[0], "expansions": found[1], "boost": round(factor, 4)}


def _searchable(path: str, text: str | None) -> str:
    """What the ranker indexed of the note: ``index_doc``'s text (the raw text when the
    note does not parse or is not in the corpus)."""
    if text is None:
        return ""
    from echo_core.corpus import index_doc
    from echo_core.notes import parse_note

    try:
        doc = index_doc(parse_note(path, text))
    except Exception:  # noqa: BLE001 - an explanation never fails a recall
        return text
    return doc.text if doc is not None else text


def _surface_words(ctx: EchoContext, text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The text's words in order, each with the terms the tokenizer makes of it."""
    out: list[tuple[str, tuple[str, ...]]] = []
    cache: dict[str, tuple[str, ...]] = {}
    for word in _WORD.findall(text):
        key = word.lower()
        terms = cache.get(key)
        if terms is None:
            terms = cache[key] = tuple(ctx.tokenizer.tokenize(word))
        if terms:
            out.append((word, terms))
    return out


def _found(term: str, words: Sequence[tuple[str, tuple[str, ...]]]) -> list[str]:
    """The note's words that make ``term`` (a phrase: its words in a row), distinct by
    case-folded spelling, at most ``MAX_WORDS``."""
    parts = term.split(" ")
    seen: dict[str, str] = {}
    flat = [(w, t) for w, terms in words for t in terms]
    for i in range(len(flat) - len(parts) + 1):
        if all(flat[i + j][1] == parts[j] for j in range(len(parts))):
            spelled = " ".join(flat[i + j][0] for j in range(len(parts)))
            seen.setdefault(spelled.lower(), spelled)
            if len(seen) >= MAX_WORDS:
                break
    return list(seen.values())


def _priors(hit: Hit, today: _dt.date, text: str | None = None) -> dict[str, Any]:
    from echo_core.corpus import asks, corpus_weight
    from echo_core.frontmatter import split_frontmatter
    from echo_core.scoring import QUESTION_WEIGHT, freshness, status_weight

    fresh = 1.0
    if hit.updated:
        try:
            fresh = freshness((today - _dt.date.fromisoformat(hit.updated[:10])).days)
        except ValueError:
            fresh = 1.0
    weight, status = corpus_weight(hit.path), status_weight(hit.status)
    question = QUESTION_WEIGHT if text is not None and asks(split_frontmatter(text)[1]) else 1.0
    return {"kind": hit.type, "corpus_weight": weight, "status": hit.status,
            "status_weight": status, "updated": hit.updated, "freshness": round(fresh, 4),
            "question_weight": question, "prior": round(weight * status * question * fresh, 4)}


def explain_lines(explain: Mapping[str, Any]) -> Iterable[str]:
    """A hit's explanation as short lines for the CLI's prose."""
    matched = ", ".join(f"{m['term']} ({'/'.join(m['words'])})" for m in explain["matched"])
    yield f"why: matched {matched or 'no query term'}"
    if explain["missing"]:
        yield f"     missing {', '.join(explain['missing'])}"
    for exp in explain["expansions"]:
        yield (f"     expansion {exp['term']} ({'/'.join(exp['words'])}) x{exp['weight']:g} "
               f"from {exp['source']}")
    if explain.get("named"):
        yield f"     the query names this note: {explain['named']}"
    keys = explain.get("key_fields") or {}
    if keys.get("boost", 1.0) > 1.0:
        yield (f"     title/alias holds {', '.join([*keys['terms'], *keys['expansions']])}: "
               f"score x{keys['boost']:g}")
    p = explain["priors"]
    yield (f"     prior {p['prior']:g} = kind {p['kind'] or '-'} {p['corpus_weight']:g} x "
           f"status {p['status'] or '-'} {p['status_weight']:g} x freshness "
           f"{p['freshness']:g} (updated {p['updated'] or '-'})"
           + (f" x asks {p['question_weight']:g} (the note's lead is a question)"
              if p.get("question_weight", 1.0) != 1.0 else "")
           + (f"; hop {explain['hop']} via {explain['via']}" if explain["hop"] else ""))
