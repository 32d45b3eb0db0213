"""recall_bm25: the ``bm25`` ranker (SPEC §3.1) — contract, persistence, incremental
updates, merges (also interrupted ones). Scoring: ``test_recall_bm25_scoring.py``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import plugins.recall_bm25
from echo_core.protocols import IndexDoc, PersistentRanker
from echo_core.protocols import Tokenizer
from echo_core.testing import KeyFieldRankerContract, PluginContract, RankerContract
from echo_core.testing.plugin_contract import strict_host
from plugins.recall_bm25.index import Bm25Index
from tests.bm25_kit import QUERIES, TOK, assert_same, changes, corpus, make, ranking

# --- contracts -----------------------------------------------------------------------


class TestBm25Ranker(KeyFieldRankerContract):
    @pytest.fixture
    def ranker(self, tmp_path: Path) -> Bm25Index:
        return make(tmp_path / "state")

    @pytest.fixture
    def ranker_factory(self) -> Callable[[Tokenizer, str], Bm25Index]:
        return lambda tokenizer, state_dir: Bm25Index(tokenizer, state_dir)

    @pytest.fixture
    def to_term(self) -> Callable[[str], str]:
        return lambda word: TOK.tokenize(word)[0]


class TestBm25RankerAfterRebuild(KeyFieldRankerContract):
    """The same contract once the documents live in a base segment (not the delta)."""

    @pytest.fixture
    def ranker(self, tmp_path: Path) -> Bm25Index:
        index = make(tmp_path / "state")
        index.rebuild([])
        return index

    @pytest.fixture
    def ranker_factory(self) -> Callable[[Tokenizer, str], Bm25Index]:
        return lambda tokenizer, state_dir: Bm25Index(tokenizer, state_dir)

    @pytest.fixture
    def to_term(self) -> Callable[[str], str]:
        return lambda word: TOK.tokenize(word)[0]

    @staticmethod
    def load_corpus(ranker: object) -> None:
        assert isinstance(ranker, Bm25Index)
        RankerContract.load_corpus(ranker)
        assert ranker.compact()
        assert ranker.stats()["ddoc"] == 0


class TestRecallBm25Plugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.recall_bm25

    @pytest.fixture
    def plugin_name(self) -> str:
        return "recall_bm25"


def test_plugin_registers_the_bm25_factory(tmp_path: Path) -> None:
    host = strict_host(("recall_bm25", plugins.recall_bm25))
    factory = host.collect("register_rankers")["bm25"]
    ranker = factory(TOK, str(tmp_path))
    assert isinstance(ranker, PersistentRanker)
    assert not (tmp_path / "bm25").exists(), "building the ranker must do no I/O"


def test_importing_the_plugin_does_not_import_numpy() -> None:
    import subprocess

    code = "import sys, plugins.recall_bm25; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent.parent, check=True)
    assert out.stdout.strip() == "False"


# --- persistence and incremental updates ----------------------------------------------


def test_a_new_instance_on_the_same_state_dir_returns_the_same_results(tmp_path: Path) -> None:
    docs = corpus(120)
    first = make(tmp_path)
    first.rebuild(docs)
    first.upsert(IndexDoc(path="notes/new.md", title="New", text="zarak zarak molix"))
    first.remove(docs[5].path)
    queries = [["zarak"], ["molix", "quinul"], ["teskyt", "vorox", "pilen"]]
    before = [ranking(first, words) for words in queries]
    first.close()
    second = make(tmp_path)
    assert not second.needs_rebuild()
    assert [ranking(second, words) for words in queries] == before
    assert second.paths() == sorted({d.path for d in docs} - {docs[5].path} | {"notes/new.md"})


def _base_files(state: Path) -> dict[str, tuple[int, int, int]]:
    root = state / "bm25"
    found = {p.relative_to(root).as_posix(): p.stat() for p in root.rglob("*")
             if p.is_file() and not p.name.startswith("delta.sqlite")}
    return {name: (st.st_mtime_ns, st.st_size, st.st_ino) for name, st in found.items()}


def test_upsert_touches_only_the_changed_document(tmp_path: Path) -> None:
    index = make(tmp_path)
    docs = corpus(300)
    index.rebuild(docs)
    files = _base_files(tmp_path)
    before = index.stats()
    old_terms = len(set(TOK.tokenize(docs[7].text)))
    text = "zarak molix zarak brandnewword"
    index.upsert(IndexDoc(path=docs[7].path, title="t", text=text))
    after = index.stats()
    assert _base_files(tmp_path) == files, "an upsert must not rewrite the base segment"
    new_terms = len(set(TOK.tokenize(text)))
    assert after["ddoc"] - before["ddoc"] == 1
    assert after["dpost"] - before["dpost"] == new_terms
    assert after["tomb"] - before["tomb"] == 1
    assert after["dfadj"] - before["dfadj"] == old_terms
    # Rows written: tombstone + one df adjustment per old term + doc + postings + 2 totals.
    assert after["row_changes"] - before["row_changes"] == 1 + old_terms + 1 + new_terms + 2
    # Updating it again replaces the delta version (its postings deleted one by one).
    index.upsert(IndexDoc(path=docs[7].path, title="t", text="molix"))
    again = index.stats()
    assert again["ddoc"] == after["ddoc"] and again["tomb"] == after["tomb"]
    assert again["dpost"] == before["dpost"] + 1
    assert again["row_changes"] - after["row_changes"] == (new_terms + 1 + 1) + (1 + 1 + 1)
    assert _base_files(tmp_path) == files


def test_the_work_of_an_upsert_does_not_grow_with_the_vault(tmp_path: Path) -> None:
    changes = []
    for size in (50, 1000):
        index = make(tmp_path / str(size))
        index.rebuild(corpus(size))
        start = index.stats()["row_changes"]
        index.upsert(IndexDoc(path="notes/n0003.md", title="x", text="zarak molix quinul"))
        index.remove("notes/n0004.md")
        changes.append(index.stats()["row_changes"] - start)
    assert changes[0] == changes[1]


def test_removed_documents_leave_results_and_paths(tmp_path: Path) -> None:
    index = make(tmp_path)
    index.rebuild([IndexDoc(path="a.md", title="", text="cobalt harbor"),
                   IndexDoc(path="b.md", title="", text="cobalt")])
    index.upsert(IndexDoc(path="c.md", title="", text="cobalt cobalt"))
    assert {p for p, _ in ranking(index, ["cobalt"])} == {"a.md", "b.md", "c.md"}
    index.remove("a.md")
    index.remove("c.md")
    index.remove("never.md")
    assert [p for p, _ in ranking(index, ["cobalt"])] == ["b.md"]
    assert ranking(index, ["harbor"]) == []
    assert index.paths() == ["b.md"]
    assert index.stats()["n_docs"] == 1


# --- merges ----------------------------------------------------------------------------

def test_merge_ranks_like_a_fresh_rebuild_of_the_same_documents(tmp_path: Path) -> None:
    index = make(tmp_path / "incremental", merge_min_docs=10**6)
    index.rebuild(corpus(200))
    final = changes(index, corpus(200))
    fresh = make(tmp_path / "fresh")
    fresh.rebuild(final.values())
    for words in QUERIES:  # base + delta already scores like a fresh build
        assert_same(ranking(index, words), ranking(fresh, words))
    generation = index.stats()["generation"]
    assert index.compact()
    assert index.stats()["generation"] == generation + 1
    assert index.stats()["ddoc"] == index.stats()["tomb"] == 0
    for words in QUERIES:
        assert_same(ranking(index, words), ranking(fresh, words))
    assert index.paths() == fresh.paths() == sorted(final)


def test_the_delta_merges_itself_past_the_threshold(tmp_path: Path) -> None:
    index = make(tmp_path, merge_min_docs=10, merge_fraction=0.0)
    index.rebuild(corpus(40))
    for i in range(11):
        index.upsert(IndexDoc(path=f"extra/{i}.md", title="", text="zarak molix"))
    stats = index.stats()
    assert stats["generation"] == 2 and stats["ddoc"] == 0 and stats["n_docs"] == 51
    assert len(list((tmp_path / "bm25").glob("base-*"))) == 2, "keeps one previous generation"
    assert not index.compact(), "nothing to fold"
    index.upsert(IndexDoc(path="extra/last.md", title="", text="zarak"))
    assert index.compact()
    assert sorted(p.name for p in (tmp_path / "bm25").glob("base-*")) == [
        "base-000002", "base-000003"]



# --- interrupted merges -----------------------------------------------------------------


def test_a_merge_interrupted_after_switching_current_never_double_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from plugins.recall_bm25.delta_store import DeltaStore

    index = make(tmp_path, merge_min_docs=10**6)
    index.rebuild(corpus(150))
    final = changes(index, corpus(150))
    with monkeypatch.context() as patch:
        patch.setattr(DeltaStore, "reset", lambda self, gen: (_ for _ in ()).throw(OSError("x")))
        with pytest.raises(OSError):
            index.compact()
    index.close()
    fresh = make(tmp_path / "fresh")
    fresh.rebuild(final.values())
    reopened = make(tmp_path)
    assert not reopened.needs_rebuild()
    assert reopened.stats()["n_docs"] == len(final)
    for words in QUERIES:
        assert_same(ranking(reopened, words), ranking(fresh, words))
    reopened.upsert(IndexDoc(path="late.md", title="", text="zarak"))
    assert reopened.stats()["ddoc"] == 1, "the stale delta was purged"


def test_a_merge_interrupted_before_switching_current_keeps_the_old_state(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from plugins.recall_bm25.layout import StateLayout

    index = make(tmp_path, merge_min_docs=10**6)
    index.rebuild(corpus(80))
    index.upsert(IndexDoc(path="x.md", title="", text="zarak zarak"))
    before = [ranking(index, words) for words in QUERIES]
    with monkeypatch.context() as patch:
        patch.setattr(StateLayout, "write_current", lambda self, gen: (_ for _ in ()).throw(
            OSError("disk full")))
        with pytest.raises(OSError):
            index.compact()
    assert [ranking(index, words) for words in QUERIES] == before
    assert [ranking(make(tmp_path), words) for words in QUERIES] == before
    assert index.compact()
    assert [p.name for p in (tmp_path / "bm25").iterdir() if p.name.startswith("tmp-")] == []
    assert len(list((tmp_path / "bm25").glob("base-*"))) == 2


