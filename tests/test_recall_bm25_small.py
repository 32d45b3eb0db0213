"""The numpy-free search of small queries (``small_search``) answers exactly as the numpy
search: same paths, same order, every score the same double, with a live delta,
tombstones, boost-only and weighted terms; and a cold process answering a small query
never imports numpy."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from echo_core.protocols import IndexDoc, WeightedTerm
from plugins.recall_bm25.index import Bm25Index
from plugins.recall_bm25.scalar_math import FRESHNESS_TABLE, freshness_of
from plugins.recall_bm25.scoring import freshness
from plugins.recall_bm25.search import merge_query, run_search
from plugins.recall_bm25.small_search import base_postings, small_search
from tests.bm25_kit import TODAY, changes, corpus, make
from tests.cold_kit import cold_env, run_cold

WORDS = [f"{a}{b}" for a in ("zar", "mol", "quin", "tesk", "vor", "pil") for b in
         ("ak", "eb", "ix", "om", "ul", "yt", "ox", "en")] + ["absentword"]


def _both(index: Bm25Index, terms: list[WeightedTerm], limit: int) -> tuple[list, list]:
    query = merge_query(terms)
    store = index._delta()
    with store.read():
        base, state, live = index._view_state(store)
        tids, _count = base_postings(base, query)
        small = small_search(base, state, live, store, query, tids, limit, TODAY) \
            if query else []
        numpy = run_search(index._snapshot(store), store, query, limit, TODAY) \
            if query else []
    return small, numpy


def _queries(seed: int, count: int) -> list[tuple[list[WeightedTerm], int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        terms = [WeightedTerm(rng.choice(WORDS), rng.choice([1.0, 1.0, 0.5, 2.0, 0.3]),
                              boost_only=rng.random() < 0.25)
                 for _ in range(rng.randint(1, 5))]
        out.append((terms, rng.choice([1, 3, 8, 10, 50, 400])))
    return out


@pytest.mark.parametrize("with_changes", [False, True])
def test_small_and_numpy_searches_give_the_same_answer(tmp_path: Path,
                                                       with_changes: bool) -> None:
    docs = corpus(500)
    docs += [IndexDoc(path=f"notes/undated{i}.md", title="", text="zarak molix zarak",
                      weight=w, updated="") for i, w in enumerate((1.0, 0.0, 1.3))]
    index = make(tmp_path / "state", merge_min_docs=10_000)
    index.rebuild(docs)
    if with_changes:
        changes(index, docs)  # a live delta and tombstones
        store = index._delta()
        with store.read():
            assert store.state().n_delta and store.state().n_tomb
    compared = 0
    for terms, limit in _queries(7 if with_changes else 3, 300):
        small, numpy = _both(index, terms, limit)
        assert small == numpy, (terms, limit)
        compared += bool(numpy)
    assert compared > 200  # most queries find something


def test_freshness_by_table_equals_the_scalar_one() -> None:
    days = list(range(TODAY - 5000, TODAY + 10, 7)) + [0, -3, TODAY]
    assert freshness(days, TODAY).tolist() == [freshness_of(d, TODAY) for d in days]
    assert FRESHNESS_TABLE[0] == 1.0 and FRESHNESS_TABLE[-1] == 0.5


def test_a_cold_recall_of_a_small_query_does_not_import_numpy(tmp_path: Path) -> None:
    env = cold_env(tmp_path)
    for args in (["init"], ["capture", "Ada Lovelace", "-k", "person", "-b", "Engines."],
                 ["capture", "Grace Hopper", "-k", "person", "-b", "COBOL compilers."],
                 ["reindex"], ["capture", "Ada Lovelace", "-k", "person", "-b", "Notes."]):
        run_cold(env, *args)
    out, numpy = run_cold(env, "recall", "COBOL engines", "--json")
    assert "grace-hopper" in out and "ada-lovelace" in out
    assert not numpy
