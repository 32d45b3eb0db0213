"""The alias expander: entity names named by a query become extra weighted terms."""

from __future__ import annotations

from typing import Any

from echo_core import WeightedTerm, entity_names, name_tokens, token_set_similarity

MIN_SCORE = 0.5
TOP_ENTITIES = 2
WEIGHT = 0.5
#: Query words in more entity names than this do not collect candidates: a word shared
#: by hundreds of names does not say which entity the query means, and collecting them
#: all made expansion cost O(entities) on common words. Scoring still uses every word.
MAX_DF = 200


class AliasExpander:
    """``expand(query, ctx)`` with ``ctx`` an ``EchoContext`` (uses its entity name cache,
    ``ctx.entity_names``, and tokenizer). ``boost_only`` terms never bring in a document
    on their own."""

    def __init__(self, weight: float = WEIGHT, boost_only: bool = False) -> None:
        self.weight = weight
        self.boost_only = boost_only

    def expand(self, query: str, context: Any) -> list[WeightedTerm]:
        """The names the query did NOT use, for the top entities it names: a one-token
        name as that token, a longer one as a phrase (its tokens joined by spaces).

        "VS Corp pricing" names Vantage Systems by an alias: the phrase "vantag system" is
        added, so notes saying "Vantage Systems" count, and notes that only say "systems"
        do not come in (recall brings in a document for a phrase only when it holds the
        whole phrase). The query's own terms are never returned. When the query holds
        one of the entity's names whole (match score 1), each term ``names`` the
        entity's note (its vault path); a looser match ("app crash" and "Driver App")
        names none. An entity the query names by every name it has adds no term, so
        nothing says it was named.
        """
        if not query.strip() or context is None:
            return []
        names = context.entity_names
        tokenizer = context.tokenizer
        own = set(tokenizer.tokenize(query))
        query_tokens = name_tokens(query)
        out: dict[str, WeightedTerm] = {}
        for match in names.fuzzy(query, min_score=MIN_SCORE, limit=TOP_ENTITIES, max_df=MAX_DF):
            every = entity_names(match.entity)
            used = [n for n in every
                    if token_set_similarity(query_tokens, name_tokens(n)) >= MIN_SCORE]
            source = _source(match.entity, used)
            named = match.entity.path if match.score >= 1.0 else ""
            for name in every:
                if name in used:
                    continue  # the name the query used: its words are already query terms
                term = " ".join(tokenizer.tokenize(name))
                if term and term not in own and term not in out:
                    out[term] = WeightedTerm(term, self.weight, self.boost_only, source, named)
        return list(out.values())


def _source(entity: Any, used: list[str]) -> str:
    """What brought an expansion in: the entity, and the name of it the query used."""
    title = getattr(entity, "title", "") or getattr(entity, "path", "")
    named = [n for n in used if n != title]
    if named:
        return f"entity {title!r}, which the query names by its alias {named[0]!r}"
    return f"entity {title!r}, which the query names"
