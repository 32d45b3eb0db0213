"""``recall``: ranked, linked, budgeted retrieval (SPEC §3.1).

Query terms come from the configured tokenizer; every registered expander may add
weighted terms, a term holding spaces being a phrase (``recall_phrases``: it boosts what
the query's words found and brings in only documents holding the whole phrase); the
configured ranker scores (BM25 x prior for ``bm25``); its best ``RERANK_DEPTH`` are
reranked by the key-field boost (``recall_fields``: the query's words in a title or an
alias);
neighbours along wikilinks are added up to ``MAX_HOPS`` hops at ``HOP_DECAY`` per hop.

The ranker is a plugin's: what it returns is checked into the documented shape and what
was left out is in the answer's warnings; a ranker that fails raises ``RankerFailed``
naming it, its plugin and the config file (``echo_core.ranker_faults``).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.errors import usage_error
from echo_core.models import Envelope, Hit
from echo_core.ops.excerpts import pack, was_cut
from echo_core.ops.links import graph_links
from echo_core.ops.recall_fields import reranked, search_depth
from echo_core.ops.recall_index import ensure_index
from echo_core.ops.recall_phrases import boost_terms, phrase_hits, split_phrases
from echo_core.protocols import WeightedTerm
from echo_core.ranker_faults import RankerFailed, collected, guarded
from echo_core.scoring import HOP_DECAY, MAX_HOPS

if TYPE_CHECKING:
    from echo_core.context import EchoContext

MAX_LIMIT = 50


@attrs.frozen
class RecallResult:
    """Primary and linked hits, the terms used, and budget bookkeeping."""

    query: str
    primary: tuple[Hit, ...]
    linked: tuple[Hit, ...] = ()
    terms: tuple[str, ...] = ()
    expansions: tuple[str, ...] = ()
    truncated: bool = False
    dropped: int = 0
    rebuilt_index: bool = False


def query_terms(ctx: EchoContext, query: str) -> tuple[list[WeightedTerm], list[WeightedTerm]]:
    """The user's terms (weight 1, duplicates summed) and the expanders' extra terms."""
    weights: dict[str, float] = {}
    for term in ctx.tokenizer.tokenize(query):
        weights[term] = weights.get(term, 0.0) + 1.0
    plain = [WeightedTerm(t, w) for t, w in weights.items()]
    extra: dict[str, WeightedTerm] = {}
    for expander in ctx.host.collect("register_expanders").values():
        for term in expander.expand(query, ctx):
            if term.term not in weights and term.term not in extra:
                extra[term.term] = term
    return plain, list(extra.values())


def _hit(path: str, score: float, text: str, terms: set[str], ctx: EchoContext,
         via: str | None = None) -> Hit:
    view = ctx.note_views.view(text, path)
    excerpt = view.excerpt(terms, ctx.tokenizer)
    return Hit(path=path, score=round(score, 6), type=view.type, updated=view.updated,
               status=view.status, excerpt=excerpt, via=via, truncated=was_cut(excerpt))


def _link_folders(ctx: EchoContext) -> list[str]:
    return ["", "journal/daily", "_agent/sessions", *ctx.manifest.kind_folders()]


def _resolve_links(ctx: EchoContext, targets: Iterable[str], known: dict[str, str | None]) -> None:
    """Record in ``known`` the vault path of each wikilink target (entity slug, a note
    stem, or a path), None when it names nothing: entity slugs in one lookup of the name
    cache, the rest by probing the folders notes live in."""
    cleaned: dict[str, str] = {}
    for raw in targets:
        if raw not in known:
            cleaned[raw] = raw.split("#", 1)[0].split("|", 1)[0].strip()
    for raw, target in list(cleaned.items()):
        if not target:
            known[raw] = None
            del cleaned[raw]
        elif target in known:
            known[raw] = known[target]
            del cleaned[raw]
    if not cleaned:
        return
    entity_paths = ctx.entity_names.paths_of(cleaned.values())
    for raw, target in cleaned.items():
        entity_path = entity_paths.get(target)
        if entity_path is not None:
            known[raw] = entity_path
            continue
        stem = target.removesuffix(".md")
        known[raw] = None
        for folder in _link_folders(ctx):
            candidate = f"{folder}/{stem}.md" if folder else f"{stem}.md"
            if ctx.vault.storage.exists(candidate):
                known[raw] = candidate
                break


def _neighbours(ctx: EchoContext, seeds: Iterable[tuple[str, float, str]], texts: dict[str, str | None],
                exclude: set[str], limit: int) -> list[tuple[str, float, str]]:
    """Notes linked from the seeds, up to ``MAX_HOPS`` hops: (path, score, via). A daily
    note's mechanical agent-log lines are not followed (``links.graph_links``).

    ``texts`` holds the notes read so far and gains those read here (the seeds' must be
    in it); the last hop's notes are not read (the caller reads the ones it keeps).

    A note is expanded (read, its links resolved) only if what it links to could still
    make the ``limit`` kept: its neighbours score at most its score x ``HOP_DECAY``, and
    the ``limit``-th best score so far only rises, so a note whose neighbours would score
    strictly below it cannot change the result.
    """
    best: dict[str, tuple[float, str]] = {}
    frontier = list(seeds)
    known: dict[str, str | None] = {p.rsplit("/", 1)[-1][:-3]: p for p in texts}
    links: dict[str, tuple[str, ...]] = {}
    for hop in range(MAX_HOPS):
        if hop:
            if len(best) >= limit:
                cut = heapq.nlargest(limit, (score for score, _ in best.values()))[-1]
                frontier = [f for f in frontier if f[1] * HOP_DECAY >= cut]
            missing = list(dict.fromkeys(p for p, _, _ in frontier if p not in texts))
            if missing:
                texts.update(ctx.vault.storage.read_many(missing))
        for path, _score, _via in frontier:
            text = texts.get(path)
            if text is not None and path not in links:
                links[path] = graph_links(path, text, ctx.note_views.view(text).links())
        _resolve_links(ctx, {t for p, _, _ in frontier for t in links.get(p, ())}, known)
        next_frontier: list[tuple[str, float, str]] = []
        for path, score, _via in frontier:
            for target in links.get(path, ()):
                linked = known.get(target)
                if linked is None or linked in exclude or linked == path:
                    continue
                new_score = score * HOP_DECAY
                if linked not in best or best[linked][0] < new_score:
                    best[linked] = (new_score, path)
                    next_frontier.append((linked, new_score, path))
        frontier = next_frontier
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:limit]
    return [(path, score, via) for path, (score, via) in ranked]


def within_budget(primary: list[Hit], linked: list[Hit], budget_chars: int | None
                  ) -> tuple[list[Hit], list[Hit], bool, int]:
    """The hits whose excerpts fit ``budget_chars`` (packed by score, ``excerpts.pack``),
    whether one was cut and how many were left out; all of them when there is no budget."""
    if budget_chars is None:
        return primary, linked, False, 0
    packed = pack(primary + linked, budget_chars)
    kept = {h.path: h for h in packed.hits}
    return ([kept[h.path] for h in primary if h.path in kept],
            [kept[h.path] for h in linked if h.path in kept], packed.truncated, packed.dropped)


def recall(ctx: EchoContext, query: str, *, limit: int = 8, include_linked: bool = True,
           budget_chars: int | None = None) -> Envelope[RecallResult]:
    """Search the vault. Errors: 2 for an empty query, a limit outside 1..50 or a budget
    under 100 characters. Rebuilds the index first when it is absent or stale-schema.
    Entity names are read from one snapshot of the entity store for the whole call."""
    with ctx.entity_names.one_snapshot(), collected() as ranker_warnings:
        try:
            found = _recall(ctx, query, limit=limit, include_linked=include_linked,
                            budget_chars=budget_chars)
        except RankerFailed as exc:
            plugin = ctx.host.owner_of("register_rankers", exc.name)
            raise exc.named(plugin, str(ctx.config.config_path)) from exc.__cause__
    if ranker_warnings:
        found = attrs.evolve(found, warnings=(*found.warnings, *ranker_warnings))
    return found


def _freshness_off(ctx: EchoContext) -> bool:
    from echo_core.ops.freshness import freshness_off

    return freshness_off(ctx)


def _stale_hits(ctx: EchoContext, scored: list[tuple[str, float]],
                texts: dict[str, str | None], terms: set[str]) -> set[str]:
    """The hits whose note, as read now, holds none of ``terms`` (the query's words and
    expansions) in what the index takes from it (``corpus.index_doc``), for a ranker whose
    hits always hold one (``hits_hold_query_words``, bm25; not a semantic one): the index had an
    older text (a note saved in place, which no folder stamp shows, and the bounded
    freshness check had not come to it yet). They are dropped from the answer and their
    index entries brought up to date (``sync_paths``), so a word that is gone is never
    answered with the note it left."""
    among = getattr(ctx.tokenizer, "terms_among", None)  # a TermFinder: only likely words
    wanted = frozenset(terms)

    def holds(text: str) -> bool:
        found = among(text, wanted) if among is not None else \
            wanted.intersection(ctx.tokenizer.tokenize(text))
        return bool(found)

    # a word starts with its term but for the term's last letter (porterlite): a text
    # holding none of these heads as a substring cannot hold a term; one that does almost
    # always holds it (kept: the rare stale hit it lets through costs less than a check)
    heads = [t[:-1] if len(t) > 3 else t for t in wanted]
    stale: set[str] = set()
    for path, _ in scored:
        text = texts.get(path)
        if text is None:
            continue
        lowered = text.lower()
        if any(head in lowered for head in heads) or holds(text):
            continue
        from echo_core.corpus import index_doc  # a title from the file name, say
        from echo_core.notes import parse_note

        doc = index_doc(parse_note(path, text))
        if doc is not None and not holds(doc.text):
            stale.add(path)
    if stale:
        from echo_core.ops.index_sync import sync_paths

        sync_paths(ctx, sorted(stale), texts={p: texts[p] for p in stale})
    return stale


def _ranked(ctx: EchoContext, plain: list[WeightedTerm], extra: list[WeightedTerm],
            limit: int, query: str = "") -> list[tuple[str, float]]:
    """The best ``limit`` (path, score): the ranker's search for the plain terms, the
    one-token expansions and the phrases' tokens (boost-only), merged with the documents
    only a whole phrase brings in (``recall_phrases``)."""
    words, phrases = split_phrases(extra)
    own = {t.term for t in plain} | {t.term for t in words}
    scored = ctx.ranker_upkeep.search(plain + words + boost_terms(phrases, own), limit, query)
    if not phrases:
        return scored
    floor = scored[-1][1] if len(scored) >= limit else 0.0
    extra_hits = phrase_hits(ctx, phrases, {p for p, _ in scored}, limit, floor)
    return sorted(scored + extra_hits, key=lambda h: (-h[1], h[0]))[:limit]


def _recall(ctx: EchoContext, query: str, *, limit: int, include_linked: bool,
            budget_chars: int | None) -> Envelope[RecallResult]:
    query = query.strip()
    if not query:
        raise usage_error("query: give some words to search for")
    if not 1 <= limit <= MAX_LIMIT:
        raise usage_error(f"limit: {limit} is outside 1..{MAX_LIMIT}")
    if budget_chars is not None and budget_chars < 100:
        raise usage_error(f"budget_chars: {budget_chars} is under the minimum of 100")
    rebuilt = ensure_index(ctx)
    upkeep = ctx.ranker_upkeep
    if upkeep.persistent is not None:
        with guarded(upkeep.name, upkeep.persistent, "in set_today"):
            upkeep.persistent.set_today(ctx.today().toordinal())
    plain, extra = query_terms(ctx, query)
    scored = _ranked(ctx, plain, extra, search_depth(ctx, limit), query) if plain else []
    scored, texts = reranked(ctx, scored, ctx.vault.storage.read_many,
                             [t.term for t in plain], [t.term for t in extra], limit,
                             upkeep.key_terms_of)
    wanted = {t.term for t in plain}
    if getattr(upkeep.ranker, "hits_hold_query_words", False) and not _freshness_off(ctx):
        stale = _stale_hits(ctx, scored, texts,
                            wanted | {w for t in extra for w in t.term.split(" ")})
        scored = [(p, s) for p, s in scored if p not in stale]
    primary = [_hit(p, s, text, wanted, ctx) for p, s in scored
               if (text := texts.get(p)) is not None]
    linked: list[Hit] = []
    if include_linked and primary:
        seeds = [(h.path, h.score, h.path) for h in primary]
        near = _neighbours(ctx, seeds, texts, {h.path for h in primary}, limit)
        missing = [p for p, _, _ in near if p not in texts]
        if missing:
            texts.update(ctx.vault.storage.read_many(missing))
        for path, score, via in near:
            text = texts.get(path)
            if text is not None:
                linked.append(_hit(path, score, text, wanted, ctx, via=via))
    primary, linked, truncated, dropped = within_budget(primary, linked, budget_chars)
    result = RecallResult(query, tuple(primary), tuple(linked), tuple(t.term for t in plain),
                          tuple(t.term for t in extra), truncated, dropped, rebuilt)
    message = (f"{len(primary)} hits" + (f", {len(linked)} linked" if linked else "")
               if plain or extra else "no word of the query is searched for (stopwords and "
               "one-letter words are left out): ask with other words")
    if truncated:
        message += " (truncated to the budget)"
    return Envelope(True, Action.RECALLED, message, result)
