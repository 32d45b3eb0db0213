"""VectorStore: persistence, search, rebuild detection, kill-safety and multi-process use."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest

np = pytest.importorskip("numpy")

from plugins.recall_hybrid import vector_files
from plugins.recall_hybrid.vector_store import StoreUnreadable, VectorStore

DIMS = 8
MODEL = "test-model"
FORK = multiprocessing.get_context("fork")


def _unit(seed: int, n: int = 1):
    rows = np.random.default_rng(seed).standard_normal((n, DIMS)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _store(folder, **kw) -> VectorStore:
    return VectorStore(folder, model_id=MODEL, dims=DIMS, **kw)


def _content(store: VectorStore) -> dict[str, tuple[float, ...]]:
    return {p: tuple(np.round(store.get(p), 6)) for p in store.paths()}


def test_a_new_store_needs_a_rebuild_and_refuses_upserts(tmp_path):
    store = _store(tmp_path / "hybrid")
    assert store.needs_rebuild() and store.paths() == []
    with pytest.raises(StoreUnreadable):
        store.upsert("a.md", _unit(1)[0])
    assert store.search(_unit(1)[0], 5) == []


def test_upsert_remove_and_search_survive_reopening(tmp_path):
    store = _store(tmp_path)
    vecs = _unit(2, 4)
    store.rebuild(["a.md", "b.md"], vecs[:2])
    store.upsert("c.md", vecs[2])
    store.upsert("a.md", vecs[3])          # replaces a base row
    store.remove("b.md")
    store.remove("never.md")               # no-op
    again = _store(tmp_path)
    assert not again.needs_rebuild()
    assert sorted(again.paths()) == ["a.md", "c.md"]
    assert np.allclose(again.get("a.md"), vecs[3]) and again.get("b.md") is None
    hits = again.search(vecs[3], 5)
    assert [p for p, _ in hits] == ["a.md", "c.md"]
    assert hits[0][1] == pytest.approx(1.0, abs=1e-6)
    assert hits[1][1] == pytest.approx(float(vecs[3] @ vecs[2]), abs=1e-6)


def test_search_returns_the_top_k_by_cosine(tmp_path):
    store = _store(tmp_path)
    matrix = _unit(3, 200)
    paths = [f"n{i}.md" for i in range(200)]
    store.rebuild(paths, matrix)
    store.upsert_many(["x.md", "y.md"], _unit(4, 2))
    query = _unit(5)[0]
    everything = {p: float(store.get(p) @ query) for p in store.paths()}
    best = sorted(everything, key=lambda p: -everything[p])[:7]
    assert [p for p, _ in store.search(query, 7)] == best
    assert len(store.search(query, 1000)) == 202


def test_save_folds_the_log_into_a_new_base(tmp_path):
    store = _store(tmp_path)
    store.rebuild(["a.md"], _unit(6))
    store.upsert_many(["b.md", "c.md"], _unit(7, 2))
    before = _content(store)
    store.save()
    log_size = os.path.getsize(tmp_path / vector_files.LOG_NAME)
    assert log_size == vector_files._LOG_HEAD.size and _content(_store(tmp_path)) == before


def test_the_log_is_compacted_when_it_outgrows_the_base(tmp_path):
    store = _store(tmp_path, compact_min=5, compact_fraction=0.0)
    store.rebuild(["a.md"], _unit(8))
    for i in range(6):
        store.upsert(f"n{i}.md", _unit(100 + i)[0])
    assert os.path.getsize(tmp_path / vector_files.LOG_NAME) == vector_files._LOG_HEAD.size
    assert len(_store(tmp_path)) == 7


@pytest.mark.parametrize(("model", "dims"), [("other-model", DIMS), (MODEL, 16)])
def test_another_model_or_width_needs_a_rebuild(tmp_path, model, dims):
    _store(tmp_path).rebuild(["a.md"], _unit(9))
    other = VectorStore(tmp_path, model_id=model, dims=dims)
    assert other.needs_rebuild()
    other.rebuild(["b.md"], np.ones((1, dims), dtype=np.float32))
    assert not other.needs_rebuild() and _store(tmp_path).needs_rebuild()


def test_a_corrupt_base_needs_a_rebuild(tmp_path):
    _store(tmp_path).rebuild(["a.md"], _unit(10))
    base = tmp_path / vector_files.BASE_NAME
    base.write_bytes(base.read_bytes()[:-3])
    assert _store(tmp_path).needs_rebuild()


def test_a_torn_log_record_is_ignored_then_cut_by_the_next_writer(tmp_path):
    store = _store(tmp_path)
    store.rebuild(["a.md"], _unit(11))
    store.upsert("b.md", _unit(12)[0])
    with open(tmp_path / vector_files.LOG_NAME, "ab") as log:   # a writer killed mid-append
        log.write(vector_files.encode_record("torn.md", _unit(13)[0])[:-5])
    assert sorted(_store(tmp_path).paths()) == ["a.md", "b.md"]
    _store(tmp_path).upsert("c.md", _unit(14)[0])
    assert sorted(_store(tmp_path).paths()) == ["a.md", "b.md", "c.md"]


def test_a_log_left_by_a_killed_compaction_is_ignored(tmp_path):
    store = _store(tmp_path)
    store.rebuild(["a.md"], _unit(15))
    store.upsert("b.md", _unit(16)[0])
    stale_log = (tmp_path / vector_files.LOG_NAME).read_bytes()
    store.save()                                            # base now holds b.md
    (tmp_path / vector_files.LOG_NAME).write_bytes(stale_log)   # as if killed before reset
    store.remove("b.md")       # the stale log is replaced, not appended to
    assert _store(tmp_path).paths() == ["a.md"]


# -- kill safety ----------------------------------------------------------------------------

def _die_at_io_call(n: int, action) -> None:
    """In a forked child: run ``action`` but ``os._exit`` at its ``n``-th write, fsync,
    truncate or rename (``n`` past the last: it completes)."""
    calls = [0]

    def dying(real):
        def wrapper(*args, **kwargs):
            calls[0] += 1
            if calls[0] == n:
                os._exit(3)
            return real(*args, **kwargs)
        return wrapper

    for name in ("write", "fsync", "replace", "ftruncate"):
        setattr(os, name, dying(getattr(os, name)))
    action()
    os._exit(0)


def _kill_at_every_io_call(folder, action) -> set[str]:
    outcomes = set()
    old = _content(_store(folder))
    for n in range(1, 200):
        child = FORK.Process(target=_die_at_io_call, args=(n, action))
        child.start()
        child.join()
        now = _store(folder)
        assert not now.needs_rebuild()
        state = _content(now)
        outcomes.add("completed" if child.exitcode == 0 else "killed")
        if child.exitcode == 0:
            return outcomes | {"new" if state != old else "same"}
        assert state == old or state == _EXPECTED[0], f"torn store after kill at call {n}"
        if state != old:
            old = state
    raise AssertionError("the action never completed")


_EXPECTED: list[dict[str, tuple[float, ...]]] = []


def test_a_kill_at_any_point_of_a_save_leaves_the_old_or_new_store(tmp_path):
    # A matrix of several write chunks, so a kill can land mid-matrix.
    vector_files.WRITE_CHUNK, chunk = 4096, vector_files.WRITE_CHUNK
    try:
        store = _store(tmp_path)
        store.rebuild([f"n{i}.md" for i in range(300)], _unit(17, 300))
        store.upsert_many([f"d{i}.md" for i in range(20)], _unit(18, 20))
        store.remove("n3.md")
        _EXPECTED[:] = [_content(store)]   # a save changes the files, never the content
        outcomes = _kill_at_every_io_call(tmp_path, lambda: _store(tmp_path).save())
        assert "killed" in outcomes and "completed" in outcomes
        assert _content(_store(tmp_path)) == _EXPECTED[0]
    finally:
        vector_files.WRITE_CHUNK = chunk


def test_a_kill_at_any_point_of_a_rebuild_or_upsert_leaves_old_or_new(tmp_path):
    store = _store(tmp_path)
    store.rebuild(["a.md", "b.md"], _unit(19, 2))
    new = _store(tmp_path / "model")
    new.rebuild(["z.md"], _unit(20))
    _EXPECTED[:] = [_content(new)]
    _kill_at_every_io_call(tmp_path, lambda: _store(tmp_path).rebuild(["z.md"], _unit(20)))
    assert _content(_store(tmp_path)) == _EXPECTED[0]
    expected = dict(_EXPECTED[0])
    expected["q.md"] = tuple(np.round(_unit(21)[0], 6))
    _EXPECTED[:] = [expected]
    _kill_at_every_io_call(tmp_path, lambda: _store(tmp_path).upsert("q.md", _unit(21)[0]))
    assert _content(_store(tmp_path)) == expected


def _upsert_forever(folder, prefix: str) -> None:
    store = _store(folder, compact_min=8, compact_fraction=0.0)
    for i in range(100_000):
        store.upsert(f"{prefix}{i}.md", _unit(i)[0])


def test_sigkill_at_random_times_during_upserts_and_compactions_leaves_a_readable_store(tmp_path):
    _store(tmp_path).rebuild(["a.md"], _unit(22))
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(6):
        child = FORK.Process(target=_upsert_forever, args=(tmp_path, f"k{seen}-"))
        child.start()
        time.sleep(0.02 + float(rng.random()) * 0.08)
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        store = _store(tmp_path)
        assert not store.needs_rebuild()
        paths = store.paths()
        assert "a.md" in paths and len(paths) >= seen
        for path in paths[-5:]:
            assert np.linalg.norm(store.get(path)) == pytest.approx(1.0, abs=1e-5)
        seen = len(paths)


def _upsert_range(folder, prefix: str, count: int) -> None:
    store = _store(folder, compact_min=10, compact_fraction=0.0)
    for i in range(count):
        store.upsert(f"{prefix}{i}.md", _unit(i)[0])
    os._exit(0)


def test_two_processes_upserting_different_paths_end_with_both(tmp_path):
    _store(tmp_path).rebuild(["a.md"], _unit(23))
    children = [FORK.Process(target=_upsert_range, args=(tmp_path, p, 60)) for p in "xy"]
    for child in children:
        child.start()
    for child in children:
        child.join()
        assert child.exitcode == 0
    paths = set(_store(tmp_path).paths())
    assert paths == {"a.md"} | {f"{p}{i}.md" for p in "xy" for i in range(60)}


def test_a_reader_sees_another_processes_upserts(tmp_path):
    reader = _store(tmp_path)
    _store(tmp_path).rebuild(["a.md"], _unit(24))
    assert reader.paths() == ["a.md"]
    child = FORK.Process(target=_upsert_range, args=(tmp_path, "w", 3))
    child.start()
    child.join()
    assert sorted(reader.paths()) == ["a.md", "w0.md", "w1.md", "w2.md"]
    assert reader.search(_unit(2)[0], 1)[0][0] == "w2.md"
