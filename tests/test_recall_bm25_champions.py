"""Champion lists (``champions``) and the numpy-free search they prove (``cold_pruned``):
whenever ``champion_search`` answers, it answers exactly as ``run_search`` (same paths,
same order, every score the same double) — with a live delta of additions, updates and
removals, an average length the delta moves either way, boost-only and weighted terms,
ties at the cut — and it answers most queries with a common term; it declines (None)
when its bound cannot prove the cut, before the lists' day, and for a segment written
without lists, which still searches correctly."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from echo_core.protocols import IndexDoc, WeightedTerm
from plugins.recall_bm25 import champions, cold_pruned
from plugins.recall_bm25.cold_pruned import champion_search
from plugins.recall_bm25.index import Bm25Index
from plugins.recall_bm25.layout import StateLayout
from plugins.recall_bm25.scoring import freshness, length_norm
from plugins.recall_bm25.search import merge_query, run_search
from plugins.recall_bm25.segment_format import (
    CHAMPION_ARRAYS,
    CHAMPION_META,
    CHAMPION_MODEL_KEY,
)
from plugins.recall_bm25.segment_reader import BaseSegment
from plugins.recall_bm25.small_search import SMALL_QUERY_POSTINGS, base_postings
from tests.bm25_kit import TODAY, changes, make
from tests.cold_kit import REPO

WORDS = [f"w{i}" for i in range(60)]
#: The corpus's newest date: the lists' day (the index's today is later).
NEWEST = "2026-12-01"


def _corpus(n: int, seed: int) -> list[IndexDoc]:
    """Docs of Zipf-like words (a few in most docs), varied lengths, weights and dates,
    and two groups of identical docs (ties): ``tieda`` docs rare, ``tiedb`` docs made of
    a common word only."""
    rng = random.Random(seed)
    ranks = [1.0 / (r + 1) for r in range(len(WORDS))]
    docs = [IndexDoc(path=f"notes/d{i:05d}.md", title="",
                     text=" ".join(rng.choices(WORDS, ranks, k=rng.randint(3, 60))),
                     weight=rng.choice([0.5, 0.6, 1.0, 1.1, 1.3]),
                     updated=rng.choice(["", "2025-01-01", "2026-06-30", NEWEST,
                                         f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"]))
            for i in range(n)]
    docs += [IndexDoc(path=f"ties/a{i:02d}.md", title="", text="tieda w0 w1 w5",
                      weight=1.0, updated="2026-06-30") for i in range(12)]
    docs += [IndexDoc(path=f"ties/b{i:02d}.md", title="", text=" ".join(["w2"] * 8),
                      weight=1.3, updated=NEWEST) for i in range(6)]
    return docs


def _queries(seed: int, count: int) -> list[tuple[list[WeightedTerm], int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        terms = [WeightedTerm(WORDS[min(int(rng.expovariate(0.15)), len(WORDS) - 1)],
                              rng.choice([1.0, 1.0, 0.5, 2.0, 0.3]),
                              boost_only=rng.random() < 0.2)
                 for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.1:
            terms.append(WeightedTerm(rng.choice(["tieda", "absentword"])))
        out.append((terms, rng.choice([1, 3, 5, 8, 10, 24, 50])))
    return out


def _both(index: Bm25Index, terms: list[WeightedTerm], limit: int, today: int
          ) -> tuple[list[tuple[str, float]] | None, list[tuple[str, float]]]:
    """(``champion_search``'s answer or None, ``run_search``'s) from one read."""
    query = merge_query(terms)
    store = index._delta()
    with store.read():
        base, state, live = index._view_state(store)
        tids, _count = base_postings(base, query)
        cold = champion_search(base, state, live, store, query, tids, limit, today) \
            if query else []
        return cold, run_search(index._snapshot(store), store, query, limit, today) \
            if query else []


@pytest.fixture
def few_champions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lists for terms of 128 postings or more, 48 champions each (the test corpus is
    small and flat: the bound fails for many queries with a large limit)."""
    monkeypatch.setattr(champions, "CHAMPION_MIN_DF", 128)
    monkeypatch.setattr(champions, "CHAMPIONS", 48)


def _shorter(index: Bm25Index) -> None:
    """A delta that lowers the average length: many one-word docs, long docs removed."""
    for i in range(400):
        index.upsert(IndexDoc(path=f"short/s{i:03d}.md", title="", text=WORDS[i % 7],
                              weight=1.3, updated=NEWEST))


def _longer(index: Bm25Index, docs: list[IndexDoc]) -> None:
    """The kit's mix of updates, additions and removals, and docs that raise the average
    length by a fifth."""
    changes(index, docs)
    for i in range(2):
        index.upsert(IndexDoc(path=f"long/l{i}.md", title="", text=" ".join(WORDS * 80),
                              weight=1.0, updated=""))


@pytest.mark.usefixtures("few_champions")
@pytest.mark.parametrize("delta", ["none", "longer", "shorter"])
def test_champion_search_answers_exactly_as_run_search(tmp_path: Path, delta: str) -> None:
    docs = _corpus(1500, seed=5)
    index = make(tmp_path / "state", merge_min_docs=100_000)
    index.rebuild(docs)
    if delta == "longer":
        _longer(index, docs)
    elif delta == "shorter":
        _shorter(index)
    store = index._delta()
    with store.read():
        snap = index._snapshot(store)
        assert (snap.avgdl > snap.base.total_len / snap.base.n_docs * 1.15) is (delta == "longer")
        assert (snap.avgdl < snap.base.total_len / snap.base.n_docs) is (delta == "shorter")
    proven = declined = 0
    for n, (terms, limit) in enumerate(_queries({"none": 1, "longer": 2, "shorter": 3}[delta],
                                               400)):
        today = (TODAY, TODAY + 40)[n % 2]
        cold, want = _both(index, terms, limit, today)
        if cold is None:
            declined += 1
        else:
            assert cold == want, (terms, limit, today)
            proven += bool(want)
    assert proven > 120  # many queries are answered from the lists ...
    assert declined > 20  # ... and the bound refuses others (48 champions, limit 50)


@pytest.mark.usefixtures("few_champions")
def test_ties_at_the_cut_are_broken_by_path_as_run_search_does(tmp_path: Path) -> None:
    index = make(tmp_path / "state")
    index.rebuild(_corpus(1500, seed=8))
    for terms, limit in [(["tieda", "w0"], 5), (["tieda", "w1"], 3), (["w2"], 4),
                         (["w2"], 6)]:
        cold, want = _both(index, [WeightedTerm(t) for t in terms], limit, TODAY)
        assert cold is not None and cold == want, terms
        scores = [s for _p, s in want]
        assert len(want) == limit and scores.count(scores[-1]) > 1  # a tie at the cut


@pytest.mark.usefixtures("few_champions")
def test_before_the_lists_day_the_search_declines(tmp_path: Path) -> None:
    index = make(tmp_path / "state")
    index.rebuild(_corpus(1500, seed=5))
    layout = StateLayout(str(tmp_path / "state"))
    gen = layout.read_current()
    assert gen is not None
    lists = BaseSegment.open(layout.gen_dir(gen), gen).champions()
    assert lists is not None and lists.day == _ordinal(NEWEST) < TODAY
    terms = [WeightedTerm("w0"), WeightedTerm("w4")]
    assert _both(index, terms, 8, lists.day)[0] is not None
    cold, want = _both(index, terms, 8, lists.day - 1)
    assert cold is None and want


@pytest.mark.usefixtures("few_champions")
def test_a_query_too_costly_to_score_is_declined(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    index = make(tmp_path / "state")
    index.rebuild(_corpus(1500, seed=5))
    terms = [WeightedTerm("w0"), WeightedTerm("w4")]
    cold, want = _both(index, terms, 3, TODAY)
    assert cold == want
    monkeypatch.setattr(cold_pruned, "MAX_LOOKUPS", 48 * 2 - 1)  # >= 48 candidates x 2
    assert _both(index, terms, 3, TODAY)[0] is None


def test_a_query_without_a_listed_term_is_left_to_the_other_paths(tmp_path: Path) -> None:
    index = make(tmp_path / "state")
    index.rebuild(_corpus(300, seed=5))  # under CHAMPION_MIN_DF postings: no lists
    assert _both(index, [WeightedTerm("w0")], 8, TODAY)[0] is None


def _ordinal(day: str) -> int:
    import datetime as dt

    return dt.date.fromisoformat(day).toordinal()


@pytest.mark.usefixtures("few_champions")
@pytest.mark.parametrize("future", [False, True])
def test_champions_hold_the_best_docs_and_bound_the_others_on_any_later_day(
        tmp_path: Path, future: bool) -> None:
    """``future``: some docs are dated after the build day (then the lists' day)."""
    docs = _corpus(1500, seed=5)
    if future:
        docs += [IndexDoc(path=f"future/f{i}.md", title="", text=" ".join(WORDS[i % 9:][:5]),
                          weight=1.3, updated="2027-03-01") for i in range(60)]
    index = make(tmp_path / "state")
    index.rebuild(docs)
    layout = StateLayout(str(tmp_path / "state"))
    gen = layout.read_current()
    assert gen is not None
    base = BaseSegment.open(layout.gen_dir(gen), gen)
    lists = base.champions()
    arr = base.arrays
    assert lists is not None and lists.count == 48
    assert lists.day == (TODAY if future else _ordinal(NEWEST))
    norm = length_norm(arr.doc_len, base.total_len / base.n_docs)
    listed = 0
    for tid in range(arr.n_terms):
        post_doc, post_tf = base.postings(tid)
        slot = lists.slot(tid)
        assert (slot is not None) is (post_doc.shape[0] >= 128)
        if slot is None:
            continue
        listed += 1
        docs = post_doc.astype(np.int64)
        chosen = np.isin(docs, np.asarray(lists.docs(slot)))
        assert chosen.sum() == 48 and list(lists.docs(slot)) == sorted(docs[chosen].tolist())
        for later in (0, 1, 40, 100, 400, 5000):
            today = lists.day + later
            impact = post_tf / (post_tf + norm[docs]) * \
                (arr.doc_weight * freshness(arr.doc_updated, today))[docs]
            # the best 24 (half the list) are champions on every day (a doc dated after
            # the lists' day counts as fresh: not always among the best later) ...
            best = np.sort(impact)[::-1][:24]
            assert future or np.array_equal(best, np.sort(impact[chosen])[::-1][:24])
            # ... and the bounds hold (tight on the lists' day)
            rest, top = lists.rest(slot, today), lists.top(slot, today)
            assert impact[~chosen].max() <= rest * (1 + 1e-12)
            assert impact.max() <= top * (1 + 1e-12)
            if later == 0:
                assert impact[~chosen].max() == pytest.approx(rest, rel=1e-12)
                assert impact.max() == pytest.approx(top, rel=1e-12)
    assert listed > 10


@pytest.mark.usefixtures("few_champions")
def test_a_merge_writes_lists_for_the_new_segment(tmp_path: Path) -> None:
    docs = _corpus(1500, seed=5)
    index = make(tmp_path / "state", merge_min_docs=100_000)
    index.rebuild(docs)
    _longer(index, docs)
    assert index.compact()
    _check_all_queries(index)


def _check_all_queries(index: Bm25Index) -> None:
    proven = 0
    for terms, limit in _queries(21, 150):
        cold, want = _both(index, terms, limit, TODAY)
        assert cold is None or cold == want
        proven += cold is not None
    assert proven > 75


def _strip_champions(state: Path) -> None:
    """Make the live segment look written before champion lists existed."""
    layout = StateLayout(str(state))
    gen = layout.read_current()
    assert gen is not None
    folder = layout.gen_dir(gen)
    for name in CHAMPION_ARRAYS:
        (folder / f"{name}.npy").unlink()
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps(
        {k: v for k, v in meta.items() if k not in (*CHAMPION_META, CHAMPION_MODEL_KEY)}))


#: Search an index in a fresh interpreter; print the answer and whether numpy was
#: imported, as JSON. argv: state dir, limit, today, terms...
_COLD_SEARCH = """
import json, sys
from echo_core.protocols import WeightedTerm
from plugins.recall_bm25 import index as bm25
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer
state, limit, today, *terms = sys.argv[1:]
taken = []
real = bm25.champion_search
def spy(*args):
    found = real(*args)
    taken.append(found is not None)
    return found
bm25.champion_search = spy
index = bm25.Bm25Index(PorterLiteTokenizer(), state)
index.set_today(int(today))
found = index.search([WeightedTerm(t) for t in terms], int(limit))
print(json.dumps({"found": found, "numpy": "numpy" in sys.modules, "champions": taken}))
"""


def _cold_search(state: Path, terms: list[str], limit: int, today: int) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", _COLD_SEARCH, str(state), str(limit),
                           str(today), *terms], capture_output=True, text=True, check=True,
                          cwd=REPO)
    parsed: dict[str, object] = json.loads(done.stdout)
    return parsed


def test_a_cold_search_with_a_common_term_does_not_import_numpy(tmp_path: Path) -> None:
    """No patched threshold: a term in 42,000 docs is past ``small_search``'s limit."""
    rng = random.Random(4)
    docs = [IndexDoc(path=f"n/{i:05d}.md", title="", text="common " + " ".join(
        rng.choices(WORDS, k=rng.randint(1, 12))), weight=rng.choice([0.6, 1.0, 1.1]),
        updated=f"2026-0{1 + i % 9}-1{i % 10}") for i in range(42_000)]
    index = make(tmp_path / "state")
    index.rebuild(docs)
    for terms, limit in [(["common"], 8), (["common", "w3"], 10), (["common", "w1", "w0"], 5)]:
        query = [WeightedTerm(t) for t in terms]
        store = index._delta()
        with store.read():
            assert base_postings(index._view_state(store)[0], merge_query(query))[1] > \
                SMALL_QUERY_POSTINGS
        cold = _cold_search(tmp_path / "state", terms, limit, TODAY)
        assert cold == {"found": [list(hit) for hit in index.search(query, limit)],
                        "numpy": False, "champions": [True]}, terms


@pytest.mark.usefixtures("few_champions")
def test_a_segment_written_without_lists_still_searches_correctly(tmp_path: Path) -> None:
    docs = _corpus(1500, seed=5)
    index = make(tmp_path / "state", merge_min_docs=100_000)
    index.rebuild(docs)
    changes(index, docs)
    queries = [(["w0"], 8), (["w0", "w1", "w9"], 10), (["w3", "w40"], 3)]
    want = [index.search([WeightedTerm(t) for t in terms], limit) for terms, limit in queries]
    _strip_champions(tmp_path / "state")
    old = make(tmp_path / "state", merge_min_docs=100_000)
    assert not old.needs_rebuild()
    for (terms, limit), expected in zip(queries, want, strict=True):
        assert old.search([WeightedTerm(t) for t in terms], limit) == expected
        assert _both(old, [WeightedTerm(t) for t in terms], limit, TODAY)[0] is None
        cold = _cold_search(tmp_path / "state", terms, limit, TODAY)
        assert cold["found"] == [list(hit) for hit in expected]
        assert cold["champions"] == [False]  # declined: small_search or numpy answered
    old.upsert(IndexDoc(path="notes/new.md", title="", text="w0 w1", weight=1.0))
    assert old.compact()  # the merge writes lists for the next generation
    _check_all_queries(old)


_LONG_LIVED = """
import json, sys
from echo_core.protocols import WeightedTerm
from plugins.recall_bm25 import index as bm25
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer
state, today, *terms = sys.argv[1:]
index = bm25.Bm25Index(PorterLiteTokenizer(), state)
index.set_today(int(today))
query = [WeightedTerm(t) for t in terms]
first = index.search(query, 8)
before = "numpy" in sys.modules
spent = bm25._python_scoring_ms[0]
bm25.NUMPY_PAYS_MS = spent  # as if this process had searched for NUMPY_PAYS_MS already
second = index.search(query, 8)
print(json.dumps({"same": first == second, "before": before, "after": "numpy" in sys.modules,
                  "spent": spent > 0}))
"""


def test_a_process_that_keeps_searching_switches_to_numpy_once_it_pays(
        tmp_path: Path) -> None:
    """A long-lived process (the MCP server) must not score in Python forever: once its
    numpy-free searches have cost about an import of numpy, it imports numpy."""
    rng = random.Random(6)
    docs = [IndexDoc(path=f"n/{i:05d}.md", title="", text="common " + " ".join(
        rng.choices(WORDS, k=rng.randint(1, 12))), weight=1.0) for i in range(42_000)]
    make(tmp_path / "state").rebuild(docs)
    done = subprocess.run([sys.executable, "-c", _LONG_LIVED, str(tmp_path / "state"),
                           str(TODAY), "common", "w3"], capture_output=True, text=True,
                          check=True, cwd=REPO)
    assert json.loads(done.stdout) == {"same": True, "before": False, "after": True,
                                       "spent": True}
