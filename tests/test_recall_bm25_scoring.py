"""recall_bm25 scoring (SPEC §3.1): BM25 against hand-computed numbers and a plain
reference implementation, priors, ties; and ``needs_rebuild`` on damaged indexes."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from echo_core.protocols import IndexDoc, WeightedTerm
from plugins.recall_bm25.index import Bm25Index
from tests.bm25_kit import HAND, QUERIES, TODAY, TOK, assert_same, bm25, corpus, make, ranking

# --- scoring ---------------------------------------------------------------------------


@pytest.mark.parametrize("stage", ["delta", "base"])
def test_bm25_scores_match_a_hand_computed_example(tmp_path: Path, stage: str) -> None:
    index = make(tmp_path)
    if stage == "base":
        index.rebuild(HAND)
    else:
        for doc in HAND:
            index.upsert(doc)
    # N = 3, lengths 3, 2, 4, avgdl = 3. "harbor": df 1, idf = ln(1 + 2.5/1.5) = 0.980829;
    # d1: tf 2, norm 1.5 -> 2 x 2.5 / 3.5 x 0.980829 = 1.401185.
    [(path, score)] = ranking(index, ["harbor"])
    assert path == "d1.md" and score == pytest.approx(1.401185, abs=1e-6)
    assert score == pytest.approx(bm25(2, 3, 3.0, 3, 1), rel=1e-12)
    # Two terms, the second at weight 0.5: sums per document.
    got = dict(index.search([WeightedTerm("cobalt"), WeightedTerm("violin", 0.5)], 10))
    assert got["d1.md"] == pytest.approx(bm25(1, 3, 3.0, 3, 2), rel=1e-12)
    assert got["d2.md"] == pytest.approx(bm25(1, 2, 3.0, 3, 2) + 0.5 * bm25(1, 2, 3.0, 3, 2),
                                         rel=1e-12)
    assert got["d3.md"] == pytest.approx(0.5 * bm25(3, 4, 3.0, 3, 2), rel=1e-12)


def test_duplicate_query_terms_sum_their_weights(tmp_path: Path) -> None:
    index = make(tmp_path)
    index.rebuild(HAND)
    twice = index.search([WeightedTerm("violin"), WeightedTerm("violin")], 10)
    assert twice == index.search([WeightedTerm("violin", 2.0)], 10)
    assert index.search([WeightedTerm("violin", 0.0)], 10) == []
    assert index.search([WeightedTerm("violin")], 0) == []


def test_ties_are_broken_by_path_even_at_the_limit(tmp_path: Path) -> None:
    index = make(tmp_path)
    index.rebuild([IndexDoc(path=p, title="", text="cobalt") for p in ("c.md", "a.md", "d.md")])
    index.upsert(IndexDoc(path="b.md", title="", text="cobalt"))
    assert [p for p, _ in ranking(index, ["cobalt"])] == ["a.md", "b.md", "c.md", "d.md"]
    assert [p for p, _ in ranking(index, ["cobalt"], limit=2)] == ["a.md", "b.md"]


def test_the_static_weight_scales_the_score(tmp_path: Path) -> None:
    index = make(tmp_path)
    index.rebuild([IndexDoc(path="active.md", title="", text="cobalt", weight=1.1),
                   IndexDoc(path="journal.md", title="", text="cobalt", weight=0.6),
                   IndexDoc(path="zero.md", title="", text="cobalt", weight=0.0)])
    got = dict(ranking(index, ["cobalt"]))
    assert set(got) == {"active.md", "journal.md"}, "a zero prior never scores > 0"
    assert got["active.md"] / got["journal.md"] == pytest.approx(1.1 / 0.6, rel=1e-9)


FRESHNESS = {  # updated -> expected freshness factor against TODAY
    "today.md": (0, 1.0), "quarter.md": (90, 0.5 ** 0.5), "half.md": (180, 0.5),
    "old.md": (400, 0.5), "future.md": (-30, 1.0),
}


@pytest.mark.parametrize("stage", ["delta", "base"])
def test_freshness_halves_every_180_days_down_to_a_floor(tmp_path: Path, stage: str) -> None:
    import datetime as dt

    docs = [IndexDoc(path=p, title="", text="cobalt",
                     updated=dt.date.fromordinal(TODAY - age).isoformat())
            for p, (age, _) in FRESHNESS.items()]
    docs += [IndexDoc(path="unknown.md", title="", text="cobalt", updated=""),
             IndexDoc(path="garbled.md", title="", text="cobalt", updated="last tuesday")]
    index = make(tmp_path)
    if stage == "base":
        index.rebuild(docs)
    else:
        for doc in docs:
            index.upsert(doc)
    got = dict(ranking(index, ["cobalt"]))
    top = got["today.md"]
    for path, (_, factor) in FRESHNESS.items():
        assert got[path] == pytest.approx(top * factor, rel=1e-9), path
    assert got["unknown.md"] == got["garbled.md"] == pytest.approx(top)
    index.set_today(TODAY + 180)
    assert dict(ranking(index, ["cobalt"]))["today.md"] == pytest.approx(top * 0.5)



# --- needs_rebuild ---------------------------------------------------------------------


def _current_gen_dir(state: Path) -> Path:
    return state / "bm25" / (state / "bm25" / "CURRENT").read_text().strip()


def _drop_gen(state: Path) -> None:
    import shutil

    shutil.rmtree(_current_gen_dir(state))


def _truncate_postings(state: Path) -> None:
    path = _current_gen_dir(state) / "post_doc.npy"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _other_schema(state: Path) -> None:
    path = _current_gen_dir(state) / "meta.json"
    meta = json.loads(path.read_text())
    path.write_text(json.dumps({**meta, "schema": 999}))


def _garbage_delta(state: Path) -> None:
    for suffix in ("-wal", "-shm"):
        (state / "bm25" / f"delta.sqlite{suffix}").unlink(missing_ok=True)
    (state / "bm25" / "delta.sqlite").write_bytes(os.urandom(8192))


def _other_delta_schema(state: Path) -> None:
    with sqlite3.connect(state / "bm25" / "delta.sqlite") as db:
        db.execute("PRAGMA user_version=99")


CORRUPTIONS: dict[str, Callable[[Path], object]] = {
    "missing generation": _drop_gen,
    "garbage CURRENT": lambda s: (s / "bm25" / "CURRENT").write_text("what\n"),
    "truncated array": _truncate_postings,
    "garbage meta": lambda s: (_current_gen_dir(s) / "meta.json").write_text("{"),
    "other schema": _other_schema,
    "garbage delta": _garbage_delta,
    "other delta schema": _other_delta_schema,
}


def test_needs_rebuild_until_the_first_build(tmp_path: Path) -> None:
    index = make(tmp_path)
    assert index.needs_rebuild()
    assert index.rebuild(corpus(10) + [corpus(3)[1]]) == 10
    assert not index.needs_rebuild()
    assert not make(tmp_path).needs_rebuild()


@pytest.mark.parametrize("damage", sorted(CORRUPTIONS))
def test_a_damaged_index_needs_a_rebuild_and_recovers(tmp_path: Path, damage: str) -> None:
    index = make(tmp_path)
    index.rebuild(corpus(30))
    index.upsert(IndexDoc(path="x.md", title="", text="zarak"))
    index.close()
    CORRUPTIONS[damage](tmp_path)
    damaged = make(tmp_path)
    assert damaged.needs_rebuild()
    assert damaged.needs_rebuild(), "asking twice is fine"
    seen: list[int] = []
    assert damaged.rebuild(corpus(1200), seen.append) == 1200
    assert seen == [500, 1000, 1200]
    assert not damaged.needs_rebuild()
    assert ranking(damaged, ["zarak"])
    assert not make(tmp_path).needs_rebuild()


@pytest.mark.parametrize("damage", ["garbage meta", "other schema", "truncated array"])
def test_an_open_index_checks_again_when_another_process_moves_the_generation(
        tmp_path: Path, damage: str) -> None:
    index = make(tmp_path)
    index.rebuild(corpus(30))
    assert not index.needs_rebuild() and not index.needs_rebuild()  # the second: unchanged
    other = make(tmp_path)
    other.rebuild(corpus(40))  # a new generation, then damaged
    other.close()
    CORRUPTIONS[damage](tmp_path)
    assert index.needs_rebuild()


def test_an_open_index_asked_again_at_the_same_generation_reads_no_delta(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from plugins.recall_bm25.delta_store import DeltaStore

    index = make(tmp_path)
    index.rebuild(corpus(30))
    assert not index.needs_rebuild()
    reads: list[int] = []
    real_read = DeltaStore.read
    monkeypatch.setattr(DeltaStore, "read", lambda self: reads.append(1) or real_read(self))
    assert not index.needs_rebuild()
    assert reads == []
    (tmp_path / "bm25" / "CURRENT").write_text("what\n")
    assert index.needs_rebuild()


def test_another_tokenizer_needs_a_rebuild(tmp_path: Path) -> None:
    make(tmp_path).rebuild(corpus(5))

    class Other:
        name = "other"

        def tokenize(self, text: str) -> list[str]:
            return text.split()

    assert Bm25Index(Other(), str(tmp_path)).needs_rebuild()



# --- differential: random operations against a reference implementation -----------------


def _reference(docs: dict[str, IndexDoc], query: list[WeightedTerm], today: int
               ) -> dict[str, float]:
    """BM25 x prior over ``docs`` written plainly (dicts and loops), for comparison."""
    import datetime as dt

    tokens = {p: TOK.tokenize(d.text) for p, d in docs.items()}
    n = len(docs)
    avgdl = sum(map(len, tokens.values())) / n if n else 1.0
    weights: dict[str, float] = {}
    plain: set[str] = set()
    for t in query:
        weights[t.term] = weights.get(t.term, 0.0) + t.weight
        if not t.boost_only:
            plain.add(t.term)
    scores = {}
    for path, toks in tokens.items():
        if not plain & set(toks):
            continue
        total = 0.0
        for term, w in weights.items():
            df = sum(term in set(other) for other in tokens.values())
            if term in toks:
                total += w * bm25(toks.count(term), len(toks), avgdl or 1.0, n, df)
        updated = docs[path].updated
        age = max(today - dt.date.fromisoformat(updated).toordinal(), 0) if updated else 0
        score = total * docs[path].weight * max(0.5, 0.5 ** (age / 180))
        if score > 0:
            scores[path] = score
    return scores


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_operations_score_like_the_reference(tmp_path: Path, seed: int) -> None:
    import random

    rng = random.Random(seed)
    vocab = ["zarak", "molix", "quinul", "teskyt", "vorox", "pilen", "cobalt", "harbor"]
    index = make(tmp_path, merge_min_docs=15, merge_fraction=0.0)
    docs: dict[str, IndexDoc] = {}
    for step in range(160):
        path = f"n/{rng.randrange(40)}.md"
        action = rng.random()
        if action < 0.7:
            doc = IndexDoc(path=path, title="", text=" ".join(
                rng.choice(vocab) for _ in range(rng.randint(0, 9))),
                weight=rng.choice([1.0, 1.1, 0.6]), updated=rng.choice(
                    ["", "2026-01-01", "2025-03-04", "2026-12-24"]))
            index.upsert(doc)
            docs[path] = doc
        elif action < 0.9:
            index.remove(path)
            docs.pop(path, None)
        elif action < 0.95:
            index.compact()
        else:
            index.rebuild(list(docs.values()))
        if step % 20 == 19:
            assert index.paths() == sorted(docs)
            query = [WeightedTerm(rng.choice(vocab), rng.choice([1.0, 0.5]))
                     for _ in range(rng.randint(1, 3))]
            query.append(WeightedTerm(rng.choice(vocab), 0.5, boost_only=True))
            got = dict(index.search(query, 100))
            want = _reference(docs, query, TODAY)
            assert set(got) == set(want), (step, query)
            for path, score in want.items():
                assert got[path] == pytest.approx(score, rel=1e-9), (step, path)


def test_colliding_term_keys_merge_the_same_way_in_base_and_delta(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 64-bit key collision (forced here with a 3-valued key) merges the terms' postings,
    identically whether the docs sit in the base segment or in the delta."""
    import plugins.recall_bm25.index as index_module
    import plugins.recall_bm25.search as search_module
    import plugins.recall_bm25.segment_builder as builder_module

    def weak(term: str) -> int:
        return len(term) % 3

    for module in (index_module, search_module, builder_module):
        monkeypatch.setattr(module, "term_key", weak)
    docs = corpus(60) + HAND
    built = make(tmp_path / "base")
    built.rebuild(docs)
    upserted = make(tmp_path / "delta")
    for doc in docs:
        upserted.upsert(doc)
    for words in QUERIES + [["cobalt"], ["harbor", "violin"]]:
        assert_same(ranking(upserted, words), ranking(built, words))
    assert upserted.compact()
    for words in QUERIES:
        assert_same(ranking(upserted, words), ranking(built, words))



# --- top_k -----------------------------------------------------------------------------


@pytest.mark.parametrize("density", [0.0, 0.001, 0.05, 0.3, 0.5, 0.51, 0.9, 1.0])
@pytest.mark.parametrize("limit", [1, 8, 50])
def test_top_k_keeps_the_best_positive_scores_at_any_density(density: float, limit: int) -> None:
    """Whichever selection runs (positives only, or the whole array), the result is the
    positive scores above the cut, best first, ties at the cut included, index order
    among equals."""
    import numpy as np

    from plugins.recall_bm25.scoring import top_k

    rng = np.random.default_rng(int(density * 1000) + limit)
    for values in (rng.random(2000), rng.choice([0.25, 0.5, 1.0], 2000)):  # distinct / tied
        scores = values * (rng.random(2000) < density)
        found = top_k(scores, limit).tolist()
        positive = sorted((i for i in range(2000) if scores[i] > 0), key=lambda i: (-scores[i], i))
        if len(positive) <= limit:
            assert found == positive
            continue
        cut = scores[positive[limit - 1]]
        expected = [i for i in positive if scores[i] >= cut]
        if len(expected) <= limit + 256:
            assert found == expected
        else:  # too many ties at the cut: exactly `limit` of the best scores
            assert len(found) == limit
            assert sorted(scores[found].tolist(), reverse=True) == [scores[i] for i in positive[:limit]]
