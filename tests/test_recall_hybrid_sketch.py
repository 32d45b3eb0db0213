"""The vector store's sketch (``vector_sketch``): a large base is shortlisted on a
projection written with it and the shortlist scored exactly. Its answers are the exact
search's; a sketch of another base, a torn one or none at all means an exact search;
a small base has none; removals and log upserts are honoured."""

from __future__ import annotations

from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from plugins.recall_hybrid import vector_sketch, vector_store
from plugins.recall_hybrid.vector_sketch import SKETCH_NAME
from plugins.recall_hybrid.vector_store import VectorStore

DIMS = 48
ROWS = 3_000
MODEL = "test-model"


@pytest.fixture(autouse=True)
def small_sketch(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sketch from 2,000 rows, of 16 dimensions (the real ones: 20k rows, 128)."""
    monkeypatch.setattr(vector_sketch, "MIN_ROWS", 2_000)
    monkeypatch.setattr(vector_sketch, "SKETCH_DIMS", 16)
    monkeypatch.setattr(vector_sketch, "MIN_CANDIDATES", 200)


def _clustered(seed: int, n: int):  # type: ignore[no-untyped-def]
    """Unit vectors near a 12-dimensional subspace, as sentence vectors cluster."""
    rng = np.random.default_rng(seed)
    basis = np.random.default_rng(0).standard_normal((12, DIMS))
    rows = rng.standard_normal((n, 12)) @ basis + 0.15 * rng.standard_normal((n, DIMS))
    rows = rows.astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _store(folder: Path) -> VectorStore:
    return VectorStore(folder, model_id=MODEL, dims=DIMS)


def _paths(n: int) -> list[str]:
    return [f"n/{i:05d}.md" for i in range(n)]


def _exact(store: VectorStore, query, limit: int) -> list[str]:  # type: ignore[no-untyped-def]
    scored = {p: float(store.get(p) @ query) for p in store.paths()}
    return sorted(scored, key=lambda p: -scored[p])[:limit]


def test_a_large_base_gets_a_sketch_and_the_same_answers_as_an_exact_search(
        tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.rebuild(_paths(ROWS), _clustered(1, ROWS))
    assert (tmp_path / SKETCH_NAME).exists() and store._sketch is not None
    for query in _clustered(2, 40):
        hits = store.search(query, 10)
        assert [p for p, _ in hits] == _exact(store, query, 10)
        assert all(s == pytest.approx(float(store.get(p) @ query), abs=1e-5) for p, s in hits)


def test_removed_rows_never_come_back_and_log_upserts_are_found(tmp_path: Path) -> None:
    store = _store(tmp_path)
    vectors = _clustered(3, ROWS)
    store.rebuild(_paths(ROWS), vectors)
    query = vectors[7]
    best = [p for p, _ in store.search(query, 5)]
    assert best[0] == "n/00007.md"
    store.remove("n/00007.md")
    store.upsert("new.md", query)
    hits = [p for p, _ in store.search(query, 5)]
    assert hits[0] == "new.md" and "n/00007.md" not in hits
    assert hits == _exact(store, query, 5)


def test_a_sketch_of_another_base_or_a_torn_one_means_an_exact_search(
        tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.rebuild(_paths(ROWS), _clustered(4, ROWS))
    old = (tmp_path / SKETCH_NAME).read_bytes()
    store.rebuild(_paths(ROWS), _clustered(5, ROWS))
    query = _clustered(6, 1)[0]
    for stale in (old, old[:len(old) // 2], b"", b"not a sketch at all"):
        (tmp_path / SKETCH_NAME).write_bytes(stale)
        again = _store(tmp_path)
        assert [p for p, _ in again.search(query, 10)] == _exact(again, query, 10)
        assert again._sketch is None


def test_a_kill_between_base_and_sketch_leaves_a_correct_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path)
    store.rebuild(_paths(ROWS), _clustered(7, ROWS))

    def killed(*_: object) -> None:
        raise KeyboardInterrupt("killed after the base was written")

    with monkeypatch.context() as patch:
        patch.setattr(vector_store, "write_sketch", killed)
        with pytest.raises(KeyboardInterrupt):
            store.rebuild(_paths(ROWS), _clustered(8, ROWS))
    assert (tmp_path / SKETCH_NAME).exists()  # the old base's sketch is still there
    again = _store(tmp_path)
    query = _clustered(9, 1)[0]
    assert [p for p, _ in again.search(query, 10)] == _exact(again, query, 10)
    assert again._sketch is None  # it names the old base: ignored


def test_a_small_base_has_no_sketch_and_shrinking_removes_it(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.rebuild(_paths(ROWS), _clustered(10, ROWS))
    assert (tmp_path / SKETCH_NAME).exists()
    store.rebuild(_paths(500), _clustered(11, 500))
    assert not (tmp_path / SKETCH_NAME).exists() and store._sketch is None
    query = _clustered(12, 1)[0]
    assert [p for p, _ in store.search(query, 10)] == _exact(store, query, 10)
