"""Pruned top-k search (``pruning.pruned_base``) answers exactly as exhaustive scoring:
same paths, same order, every score the same double, on a random corpus with a live
delta, tombstones, boost-only and weighted terms, any limit and other days; and it does
score fewer documents than the query's postings."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from echo_core.protocols import IndexDoc, WeightedTerm
from plugins.recall_bm25 import pruning, search
from plugins.recall_bm25.index import Bm25Index
from plugins.recall_bm25.search import merge_query, run_search
from tests.bm25_kit import TODAY, changes, make

WORDS = [f"w{i}" for i in range(60)]


def _corpus(n: int, seed: int) -> list[IndexDoc]:
    """Docs of Zipf-like words (a few in most docs), varied lengths, weights and dates."""
    rng = random.Random(seed)
    ranks = [1.0 / (r + 1) for r in range(len(WORDS))]
    return [IndexDoc(path=f"notes/d{i:05d}.md", title="",
                     text=" ".join(rng.choices(WORDS, ranks, k=rng.randint(3, 60))),
                     weight=rng.choice([0.5, 0.6, 1.0, 1.1, 1.3]),
                     updated=rng.choice(["", "2025-01-01", "2026-06-30", "2026-12-01",
                                         f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"]))
            for i in range(n)]


def _queries(seed: int, count: int) -> list[tuple[list[WeightedTerm], int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        terms = [WeightedTerm(WORDS[min(int(rng.expovariate(0.15)), len(WORDS) - 1)],
                              rng.choice([1.0, 1.0, 0.5, 2.0, 0.3]),
                              boost_only=rng.random() < 0.2)
                 for _ in range(rng.randint(1, 4))]
        out.append((terms, rng.choice([1, 3, 8, 10, 24, 50])))
    return out


def _both(index: Bm25Index, terms: list[WeightedTerm], limit: int, today: int
          ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    query = merge_query(terms)
    store = index._delta()
    with store.read():
        snap = index._snapshot(store)
        return (run_search(snap, store, query, limit, today),
                run_search(snap, store, query, limit, today, prune=False))


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Prune every query, in small blocks with few champions (both paths exercised),
    never giving up for exhaustive scoring; records (candidates scored, plain postings)
    of each pruned search."""
    monkeypatch.setattr(search, "PRUNE_MIN_POSTINGS", 1)
    monkeypatch.setattr(pruning, "BLOCK", 8)
    monkeypatch.setattr(pruning, "CHAMPIONS", 16)
    monkeypatch.setattr(pruning, "LOOKUP_COST", 0)
    seen: list[tuple[int, int]] = []
    real = pruning.pruned_base

    def spy(base, terms, *args):  # type: ignore[no-untyped-def]
        found = real(base, terms, *args)
        if found is not None:
            seen.append((found[0].shape[0], sum(base.df(t.tid) for t in terms if t.plain)))
        return found

    monkeypatch.setattr(search, "pruned_base", spy)
    return seen


@pytest.mark.parametrize("with_changes", [False, True])
def test_pruned_and_exhaustive_searches_give_the_same_answer(
        tmp_path: Path, counted: list[tuple[int, int]], with_changes: bool) -> None:
    docs = _corpus(1500, seed=5)
    index = make(tmp_path / "state", merge_min_docs=100_000)
    index.rebuild(docs)
    if with_changes:
        changes(index, docs)  # a live delta and tombstones
        index.upsert(IndexDoc(path="notes/long.md", title="", text=" ".join(WORDS * 40),
                              weight=1.0, updated=""))  # raises the average length
    compared = 0
    for n, (terms, limit) in enumerate(_queries(11 if with_changes else 13, 400)):
        today = (TODAY, TODAY - 500, TODAY + 30)[n % 3]  # bounds made again per day
        pruned, exhaustive = _both(index, terms, limit, today)
        assert pruned == exhaustive, (terms, limit, today)
        compared += bool(exhaustive)
    assert compared > 300
    assert len(counted) > 200  # most queries took the pruned path
    assert sum(c for c, _ in counted) < 0.5 * sum(p for _, p in counted)  # and it prunes


def test_a_query_with_a_common_term_scores_only_its_best_documents(tmp_path: Path) -> None:
    """Without patching the thresholds: a term in every doc, limit 10, scores a few
    champions, not the 20k postings."""
    rng = random.Random(2)
    docs = [IndexDoc(path=f"n/{i}.md", title="", text="common " + " ".join(
        rng.choices(WORDS, k=rng.randint(1, 30))), weight=1.0 + i * 1e-6, updated="2026-05-01")
        for i in range(20_000)]
    index = make(tmp_path / "state")
    index.rebuild(docs)
    query = merge_query([WeightedTerm("common")])
    store = index._delta()
    with store.read():
        snap = index._snapshot(store)
        terms = [pruning.ScoredTerm(int(snap.base.term_ids([search.term_key("common")])[0]),
                                    1.0, True)]
        found = pruning.pruned_base(snap.base, terms, 10, snap.avgdl, TODAY, snap.norm,
                                    lambda ids: snap.prior(ids, TODAY))
        assert found is not None and found[0].shape[0] <= pruning.CHAMPIONS
        assert run_search(snap, store, query, 10, TODAY) == \
            run_search(snap, store, query, 10, TODAY, prune=False)


def test_a_query_whose_blocks_keep_most_documents_is_scored_exhaustively(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two words in nearly every doc with close impacts: MaxScore's blocks keep nearly
    every doc, so ``pruned_base`` gives up (a binary search per candidate and term costs
    more than scoring every posting) and the search answers as the exhaustive one."""
    monkeypatch.setattr(pruning, "CHAMPIONS", 16)
    rng = random.Random(4)
    docs = [IndexDoc(path=f"n/{i}.md", title="", text=" ".join(
        ["alpha"] * rng.randint(1, 3) + ["beta"] * rng.randint(1, 3)
        + rng.choices(WORDS, k=rng.randint(5, 30))), weight=1.0, updated="2026-05-01")
        for i in range(6_000)]
    index = make(tmp_path / "state")
    index.rebuild(docs)
    query = merge_query([WeightedTerm("alpha"), WeightedTerm("beta")])
    store = index._delta()
    with store.read():
        snap = index._snapshot(store)
        tids = snap.base.term_ids([search.term_key("alpha"), search.term_key("beta")])
        terms = [pruning.ScoredTerm(int(t), 1.0, True) for t in tids]
        args = (snap.base, terms, 30, snap.avgdl, TODAY, snap.norm,
                lambda ids: snap.prior(ids, TODAY))
        assert pruning.pruned_base(*args) is None
        monkeypatch.setattr(pruning, "LOOKUP_COST", 0)  # never giving up: it still prunes
        kept = pruning.pruned_base(*args)
        assert kept is not None and kept[0].shape[0] * 2 * 6 > 2 * len(docs)
        assert run_search(snap, store, query, 30, TODAY) == \
            run_search(snap, store, query, 30, TODAY, prune=False)
