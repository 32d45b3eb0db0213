"""A base segment is the same whichever way its documents were cut into parts: built
here, tokenized in parts (``tokenized``, as a forked child does) or split across two
processes by ``Bm25Index.rebuild``, every array of the segment is equal, and each doc's
forward terms ascend (the segment format's order)."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pytest

from echo_core.protocols import IndexDoc
from plugins.recall_bm25 import index as bm25_index
from plugins.recall_bm25 import segment_parts
from plugins.recall_bm25.segment_builder import SegmentBuilder, tokenized
from plugins.recall_bm25.segment_format import ARRAYS, CHAMPION_ARRAYS, SegmentArrays
from tests.bm25_kit import TOK, corpus, make
from tests.fork_kit import force_forking, spy_forks


def _docs(repeated: bool = True) -> list[IndexDoc]:
    """700 docs and 4 more; ``repeated``: two of them give a path again (a later version)."""
    docs = corpus(700)
    if not repeated:
        return [*docs, IndexDoc(path="notes/u.md", title="u", text="Caf\u00e9 \ufb01le",
                                weight=1.0, updated="2026-05-06"),
                IndexDoc(path="notes/stop.md", title="s", text="the and of a", weight=1.0)]
    docs += [IndexDoc(path=docs[5].path, title="again", text="zarak zzqx pilen", weight=1.0),
             IndexDoc(path="notes/u.md", title="u", text="Caf\u00e9 na\u00efve \ufb01le",
                      weight=1.0, updated="2026-05-06"),
             IndexDoc(path="notes/stop.md", title="s", text="the and of a", weight=1.0),
             IndexDoc(path=docs[600].path, title="later", text="molix only", weight=1.0)]
    return docs


def _arrays(segment: SegmentArrays) -> dict[str, list[object]]:
    return {name: getattr(segment, name).tolist() for name in ARRAYS}


def _built(docs: list[IndexDoc], cuts: list[int], *,
           sealed: bool = False) -> dict[str, list[object]]:
    """The segment of ``docs``: those before the first cut added here (counted at once
    when ``sealed``, as ``Bm25Index.rebuild`` does before it waits for its child), each
    stretch between cuts tokenized as a part of its own."""
    builder = SegmentBuilder(TOK)
    bounds = [*cuts, len(docs)]
    for doc in docs[:bounds[0]]:
        builder.add(doc)
    if sealed:
        builder.seal()
    for start, end in itertools.pairwise(bounds):
        builder.add_tokenized(tokenized(TOK, docs[start:end]))
    arrays = _arrays(builder.finish())
    assert builder.count == len({d.path for d in docs})
    return arrays


@pytest.mark.parametrize("repeated", [True, False])
@pytest.mark.parametrize("cuts", [[0], [350], [100, 400, 650], [701], [0, 0, 700]])
def test_a_segment_cut_into_parts_equals_the_one_built_in_one_go(cuts: list[int],
                                                                 repeated: bool) -> None:
    docs = _docs(repeated)
    assert _built(docs, cuts) == _built(docs, [len(docs)])


@pytest.mark.parametrize("cuts", [[0], [350], [100, 400, 650]])
def test_parts_laid_out_in_place_equal_parts_sorted_by_assemble(cuts: list[int]) -> None:
    docs = _docs(repeated=False)
    bounds = [*cuts, len(docs)]
    parts = [tokenized(TOK, docs[a:b]) for a, b in zip([0, *cuts], bounds, strict=True)]
    keys, maps, repeats = segment_parts._vocabulary(parts)
    columns, keep = segment_parts._columns(parts)
    assert keep is None and not repeats
    laid = segment_parts.laid_out(parts, keys, maps, columns)
    assert laid is not None
    sorted_ = segment_parts.assembled(parts, keys, maps, columns, None, False)
    assert _arrays(laid) == _arrays(sorted_)
    assert _arrays(laid) == _built(docs, [len(docs)])


def test_each_docs_forward_terms_ascend_and_are_its_posted_terms() -> None:
    builder = SegmentBuilder(TOK)
    builder.add_tokenized(tokenized(TOK, _docs()[:300]))
    segment = builder.finish()
    ptr, fwd = segment.fwd_ptr, segment.fwd_term
    posted_terms = np.repeat(np.arange(segment.term_key.shape[0]), np.diff(segment.term_ptr))
    for doc in range(segment.doc_len.shape[0]):
        terms = fwd[ptr[doc]:ptr[doc + 1]]
        assert (np.diff(terms.astype(np.int64)) > 0).all()
        assert sorted(terms.tolist()) == sorted(posted_terms[segment.post_doc == doc].tolist())


@pytest.mark.parametrize("cuts", [[0], [350], [100, 400, 650], [701]])
def test_a_builder_sealed_before_its_parts_arrive_makes_the_same_segment(
        cuts: list[int]) -> None:
    docs = _docs(repeated=True)
    assert _built(docs, cuts, sealed=True) == _built(docs, [len(docs)])


def test_a_doc_added_after_seal_is_refused() -> None:
    builder = SegmentBuilder(TOK)
    builder.add(corpus(1)[0])
    builder.seal()
    with pytest.raises(ValueError, match="order"):
        builder.add(corpus(2)[1])


def test_a_doc_added_after_a_part_is_refused() -> None:
    builder = SegmentBuilder(TOK)
    builder.add_tokenized(tokenized(TOK, corpus(3)))
    with pytest.raises(ValueError, match="order"):
        builder.add(corpus(1)[0])


def _segment_files(state: Path) -> dict[str, bytes]:
    (base,) = [p for p in (state / "bm25").iterdir() if p.name.startswith("base-")]
    return {p.name: p.read_bytes() for p in sorted(base.glob("*.npy"))}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_rebuild_split_across_two_processes_writes_the_same_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = _docs()
    monkeypatch.setenv("ECHO_FORK", "0")
    make(tmp_path / "here").rebuild(docs)
    force_forking(monkeypatch)
    monkeypatch.setattr(bm25_index, "APART_MIN_DOCS", 100)
    children = spy_forks(monkeypatch, bm25_index)
    assert make(tmp_path / "apart").rebuild(docs) == len({d.path for d in docs})
    assert children and children[0] is not None
    here, apart = _segment_files(tmp_path / "here"), _segment_files(tmp_path / "apart")
    assert len(here) == len(ARRAYS) + len(CHAMPION_ARRAYS)
    assert apart == here


def test_a_rebuild_of_docs_whose_words_are_all_dropped_indexes_them(tmp_path: Path) -> None:
    index = make(tmp_path / "stop")
    docs = [IndexDoc(path="notes/a.md", title="", text="the and of a"),
            IndexDoc(path="notes/b.md", title="", text="")]
    assert index.rebuild(docs) == 2
    assert index.paths() == ["notes/a.md", "notes/b.md"]
