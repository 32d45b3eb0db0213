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


def _corpus_vault(root: Path) -> Path:
    """A folder vault of 300 notes, with one non-UTF-8 note in each half of the listing."""
    vault = root / "vault"
    (vault / "notes").mkdir(parents=True)
    for i, doc in enumerate(corpus(300)):
        (vault / doc.path).write_text(f"# {doc.title}\n\n{doc.text}\n", encoding="utf-8")
        if i in (40, 250):
            (vault / f"notes/bad{i:04d}.md").write_bytes(b"# bad\n\n\xff\xfe zarak\n")
    return vault


def _rebuild_corpus(root: Path, vault: Path) -> tuple[int, tuple[str, ...],
                                                      list[list[tuple[str, float]]]]:
    from echo_core.context import create_context
    from echo_core.ops.recall_index import rebuild_index
    from tests.capture_kit import isolated_env

    ctx = create_context(vault=str(vault), state_dir=str(root / "state"),
                         env=isolated_env(root / "home"))
    result = rebuild_index(ctx)
    index = ctx.ranker_upkeep.persistent
    assert isinstance(index, bm25_index.Bm25Index)
    index.set_today(740_000)
    return result.indexed, tuple(sorted(result.skipped)), [
        ranking(index, q, limit=1000) for q in QUERIES]


def test_a_corpus_read_in_two_processes_indexes_and_skips_as_one_read_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The core hands the rebuild its corpus unread (``CorpusDocs``): the child reads its
    half itself, and the notes it could not read are reported as skipped, once each."""
    vault = _corpus_vault(tmp_path)
    monkeypatch.setenv("ECHO_FORK", "0")
    here = _rebuild_corpus(tmp_path / "here", vault)
    force_forking(monkeypatch)
    monkeypatch.setattr(bm25_index, "APART_MIN_DOCS", 100)
    children = spy_forks(monkeypatch, bm25_index)
    apart = _rebuild_corpus(tmp_path / "apart", vault)
    assert children and children[0] is not None
    assert here[1] == ("notes/bad0040.md", "notes/bad0250.md")
    assert apart == here
    assert here[0] == 300 and any(here[2])


def test_a_corpus_on_a_storage_that_does_not_say_its_reads_fork_is_read_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from plugins.storage_fs.folder_storage import FolderStorage

    vault = _corpus_vault(tmp_path)
    force_forking(monkeypatch)
    monkeypatch.setattr(bm25_index, "APART_MIN_DOCS", 100)
    monkeypatch.setattr(FolderStorage, "fork_safe_reads", False)
    children = spy_forks(monkeypatch, bm25_index)
    count, skipped, _ = _rebuild_corpus(tmp_path / "here", vault)
    assert children == []
    assert count == 300 and skipped == ("notes/bad0040.md", "notes/bad0250.md")
