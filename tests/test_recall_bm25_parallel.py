"""``Bm25Index.rebuild`` of a long list tokenizes half of it in a forked child: the index
it builds answers exactly as one built in a single process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from echo_core.protocols import IndexDoc
from plugins.recall_bm25 import index as bm25_index
from tests.bm25_kit import QUERIES, corpus, make, ranking
from tests.fork_kit import force_forking, spy_forks

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


def _docs() -> list[IndexDoc]:
    docs = corpus(900)
    # a path given twice, once in each half: the later version wins, as in one process
    docs.append(IndexDoc(path=docs[10].path, title="again", text="zarak zzqx pilen",
                         weight=1.0, updated="2026-05-05"))
    docs.append(IndexDoc(path="notes/unicode.md", title="u", text="Caf\u00e9 na\u00efve zarak",
                         weight=1.0, updated="2026-05-06"))
    return docs


def _build(state: Path, docs: list[IndexDoc]) -> list[list[tuple[str, float]]]:
    index = make(state)
    index.rebuild(docs)
    return [ranking(index, q, limit=1000) for q in [*QUERIES, ["cafe"], ["naive"], ["zzqx"]]]


def test_a_rebuild_split_across_two_processes_ranks_as_one_built_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = _docs()
    monkeypatch.setenv("ECHO_FORK", "0")
    here = _build(tmp_path / "here", docs)
    force_forking(monkeypatch)
    monkeypatch.setattr(bm25_index, "APART_MIN_DOCS", 100)
    children = spy_forks(monkeypatch, bm25_index)
    apart = _build(tmp_path / "apart", docs)
    assert children and children[0] is not None  # half of it was tokenized in a child
    assert apart == here
    assert any(apart)  # the queries do find documents
    again = dict(apart[-1])
    assert list(again) == [docs[10].path]  # the later version of the repeated path


def test_a_short_list_is_built_in_one_process(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(bm25_index, "start_forked", lambda *a, **k: calls.append(a))
    index = make(tmp_path / "small")
    assert index.rebuild(corpus(50)) == 50
    assert calls == []
