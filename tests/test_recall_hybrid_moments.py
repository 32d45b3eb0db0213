"""``VectorStore.cosine_stats`` (the hybrid ranker's standardisation): the mean and
standard deviation of a query's cosines over every stored vector, exact whether they come
from the base's moments file (``vector_moments``) corrected for the log, or from the rows
when the file is missing, stale or torn; and ``cosines_of``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from plugins.recall_hybrid import vector_moments  # noqa: E402
from plugins.recall_hybrid.vector_moments import MOMENTS_NAME, moments_of  # noqa: E402
from plugins.recall_hybrid.vector_store import VectorStore  # noqa: E402

DIMS = 16


def _unit(seed: int, n: int = 1):  # type: ignore[no-untyped-def]
    rows = np.random.default_rng(seed).standard_normal((n, DIMS)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _store(folder: Path) -> VectorStore:
    return VectorStore(folder, model_id="test-model", dims=DIMS)


def _brute(store: VectorStore, query) -> tuple[float, float, int]:  # type: ignore[no-untyped-def]
    cosines = np.array([float(store.get(p) @ query) for p in store.paths()], dtype=np.float64)
    return float(cosines.mean()), float(cosines.std()), len(cosines)


def _filled(folder: Path) -> VectorStore:
    store = _store(folder)
    rows = _unit(1, 50)
    store.rebuild([f"n{i}.md" for i in range(50)], rows)
    store.upsert("n3.md", _unit(2)[0])        # replaces a base row
    store.upsert("new.md", _unit(3)[0])       # a vector only the log has
    store.remove("n7.md")                     # a base row gone
    store.remove("new-then-gone.md")          # never there: a no-op
    return store


def _assert_stats(store: VectorStore, query) -> None:  # type: ignore[no-untyped-def]
    mean, std, count = store.cosine_stats(query)
    want_mean, want_std, want_count = _brute(store, query)
    assert count == want_count == 50
    assert mean == pytest.approx(want_mean, abs=1e-6)
    assert std == pytest.approx(want_std, abs=1e-6)


def test_the_statistics_from_the_moments_are_those_of_every_live_vector(tmp_path: Path) -> None:
    store = _filled(tmp_path)
    assert (tmp_path / MOMENTS_NAME).is_file()
    for seed in range(5):
        _assert_stats(store, _unit(100 + seed)[0])
    _assert_stats(_store(tmp_path), _unit(7)[0])  # another process's view, from the files


@pytest.mark.parametrize("damage", ["missing", "torn", "other base"])
def test_without_usable_moments_the_rows_give_the_same_statistics(
        tmp_path: Path, damage: str) -> None:
    _filled(tmp_path)
    path = tmp_path / MOMENTS_NAME
    if damage == "missing":
        path.unlink()
    elif damage == "torn":
        path.write_bytes(path.read_bytes()[:-9])
    else:
        vector_moments.write_moments(tmp_path, os.urandom(16), _unit(9, 49))
    store = _store(tmp_path)
    store.refresh()
    assert store._moments is None  # the fall-back is what is under test
    _assert_stats(store, _unit(11)[0])


def test_a_compaction_writes_the_new_bases_moments(tmp_path: Path) -> None:
    store = _filled(tmp_path)
    store.save()
    assert store._moments is not None and store._moments.count == 50
    _assert_stats(store, _unit(12)[0])


def test_an_empty_store_has_no_statistics(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.rebuild([], np.zeros((0, DIMS), np.float32))
    assert store.cosine_stats(_unit(1)[0]) == (0.0, 0.0, 0)
    store.upsert("a.md", _unit(2)[0])
    mean, std, count = store.cosine_stats(_unit(2)[0])
    assert count == 1 and mean == pytest.approx(1.0, abs=1e-6) and std == pytest.approx(0.0)


def test_the_moments_are_the_sums_of_the_rows_and_of_their_outer_products() -> None:
    rows = _unit(5, 20_000)  # more than one chunk
    found = moments_of(rows)
    exact = rows.astype(np.float64)
    assert found.count == 20_000
    assert np.allclose(found.total, exact.sum(axis=0), atol=1e-6)
    assert np.allclose(found.outer, exact.T @ exact, atol=1e-3)


def test_cosines_of_gives_the_stored_vectors_cosines_and_skips_the_rest(
        tmp_path: Path) -> None:
    store = _filled(tmp_path)
    query = _unit(13)[0]
    found = store.cosines_of(query, ["n3.md", "new.md", "n7.md", "absent.md", "n0.md"])
    assert set(found) == {"n3.md", "new.md", "n0.md"}
    for path, cosine in found.items():
        assert cosine == pytest.approx(float(store.get(path) @ query), abs=1e-6)
    assert store.cosines_of(query, []) == {}
