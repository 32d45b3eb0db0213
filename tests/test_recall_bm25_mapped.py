"""The base segment's numpy-free lookups (``npy_map``): the same answers as the numpy
arrays over the same files, damaged files refused, and a write to the index (what every
capture does) made without importing numpy."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.protocols import IndexDoc
from plugins.recall_bm25.layout import CorruptIndex, StateLayout
from plugins.recall_bm25.segment_reader import BaseSegment
from tests.bm25_kit import changes, corpus, make, ranking
from tests.cold_kit import cold_env, run_cold


def _built(tmp_path: Path, n: int = 300) -> BaseSegment:
    index = make(tmp_path / "state")
    index.rebuild(corpus(n) + [IndexDoc(path="notes/café ü.md", title="", text="zarak")])
    layout = StateLayout(str(tmp_path / "state"))
    gen = layout.read_current()
    assert gen is not None
    return BaseSegment.open(layout.gen_dir(gen), gen)


def test_mapped_lookups_equal_the_numpy_arrays(tmp_path: Path) -> None:
    base = _built(tmp_path)
    arrays = base.arrays
    assert base.n_docs == arrays.n_docs == 301
    for doc in range(base.n_docs):
        path = base.path(doc)
        assert base.find(path) == doc
        start, end = arrays.fwd_ptr[doc:doc + 2]
        assert base.doc_term_ids(doc) == arrays.fwd_term[start:end].tolist()
        assert base.doc_length(doc) == int(arrays.doc_len[doc])
    assert base.find("notes/absent.md") is None
    assert "notes/café ü.md" in base.all_paths()
    for term in range(arrays.n_terms):
        assert base.df(term) == int(arrays.term_ptr[term + 1] - arrays.term_ptr[term])


def test_find_answers_the_same_with_and_without_the_paths_it_handed_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import plugins.recall_bm25.segment_reader as reader

    monkeypatch.setattr(reader, "HANDED_OUT_MAX", 7)
    base = _built(tmp_path)
    layout = StateLayout(str(tmp_path / "state"))
    paths = base.all_paths()
    expected = {path: doc for doc, path in enumerate(paths)}
    for doc in range(0, base.n_docs, 3):  # hands out a third of the paths, 7 at most kept
        assert base.path(doc) == paths[doc] == base.path(doc)
        assert len(base._handed_out) <= 7 and len(base._path_of) <= 7
    for path, doc in expected.items():
        assert base.find(path) == doc
    assert base.find("notes/absent.md") is None
    other = BaseSegment.open(layout.gen_dir(base.generation), base.generation)
    assert [other.find(p) for p in paths] == list(range(base.n_docs))


def test_an_in_memory_segment_answers_the_same_lookups() -> None:
    empty = BaseSegment.empty()
    assert empty.n_docs == 0 and empty.find("notes/a.md") is None and empty.all_paths() == []


@pytest.mark.parametrize("damage", ["truncated", "not npy", "other dtype"])
def test_a_damaged_array_file_is_a_corrupt_index(tmp_path: Path, damage: str) -> None:
    base = _built(tmp_path)
    folder = StateLayout(str(tmp_path / "state")).gen_dir(base.generation)
    target = folder / "doc_len.npy"
    data = target.read_bytes()
    if damage == "truncated":
        target.write_bytes(data[:-8])
    elif damage == "not npy":
        target.write_bytes(b"garbage" + data[7:])
    else:
        target.write_bytes(data.replace(b"'<u4'", b"'<i4'", 1))
    with pytest.raises(CorruptIndex):
        BaseSegment.open(folder, base.generation)


def test_upserts_and_removals_through_the_mapped_base_rank_as_before(tmp_path: Path) -> None:
    """Supersede a base doc (tombstone its terms) without numpy; search is unchanged from
    an index rebuilt from the final corpus (scores equal up to float rounding)."""
    docs = corpus(200)
    index = make(tmp_path / "a")
    index.rebuild(docs)
    final = changes(index, docs)
    fresh = make(tmp_path / "b")
    fresh.rebuild(sorted(final.values(), key=lambda d: d.path))
    for words in (["zarak"], ["molix", "quinul"], ["teskyt", "vorox", "pilen"]):
        got, want = ranking(index, words), ranking(fresh, words)
        assert [p for p, _ in got] == [p for p, _ in want]
        assert [round(s, 9) for _, s in got] == [round(s, 9) for _, s in want]


def test_a_capture_on_an_indexed_vault_does_not_import_numpy(tmp_path: Path) -> None:
    env = cold_env(tmp_path)
    for args in (["init"], ["capture", "Ada Lovelace", "-k", "person", "-b", "Engines."],
                 ["reindex"]):
        run_cold(env, *args)
    for args in (["capture", "Grace Hopper", "-k", "person", "-b", "COBOL."],
                 ["capture", "Ada Lovelace", "-k", "person", "-b", "Notes on Babbage."]):
        _out, numpy = run_cold(env, *args)
        assert not numpy
