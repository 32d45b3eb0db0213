"""The ``pgfts`` ranker (PostgreSQL full-text search in the vault's own schema): the
ranker contract on a real server; ``recall = "pgfts"`` end to end on a PostgreSQL vault
(a capture is recalled, and a replica with another state dir sees it at once); the
rebuild rules; and on a folder vault the fallback to ``bm25`` with one warning."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from types import ModuleType

import pytest

from echo_core import RankerFallbackWarning, RankerUnavailable, invoke, ranker_choice
from echo_core.context import EchoContext, create_context
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.recall import recall
from echo_core.protocols import IndexDoc, PersistentRanker, Ranker, WeightedTerm
from echo_core.testing import PluginContract, RankerContract
from plugins import recall_pgfts
from plugins.recall_pgfts import PgftsFactory, pg_capable
from plugins.recall_pgfts.lexemes import tsvector_literal
from plugins.recall_pgfts.ranker import PgftsRanker
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer
from plugins.storage_postgres import open_postgres_storage
from plugins.storage_postgres.pg_storage import PostgresStorage
from tests.capture_kit import isolated_env
from tests.postgres_kit import pg_schema_url, postgres_server

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures used by this module
TOKENIZER = PorterLiteTokenizer()


@pytest.fixture
def pg_storage(pg_schema_url: str) -> Iterator[PostgresStorage]:
    storage = open_postgres_storage(pg_schema_url, {})
    storage.create()
    yield storage
    storage.close()


def _ranker(storage: PostgresStorage, tmp_path: Path) -> PgftsRanker:
    made = PgftsFactory()(TOKENIZER, str(tmp_path), storage=storage)
    assert isinstance(made, PgftsRanker)
    return made


class TestPgftsRanker(RankerContract):
    @pytest.fixture
    def ranker(self, pg_storage: PostgresStorage, tmp_path: Path) -> Ranker:
        return _ranker(pg_storage, tmp_path)

    @pytest.fixture
    def ranker_factory(self, pg_storage: PostgresStorage) -> Callable[[Any, str], Ranker]:
        return lambda tokenizer, state_dir: PgftsFactory()(tokenizer, state_dir,
                                                           storage=pg_storage)

    @pytest.fixture
    def to_term(self) -> Callable[[str], str]:
        return lambda word: TOKENIZER.tokenize(word)[0]


class TestRecallPgftsPlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return recall_pgfts

    @pytest.fixture
    def plugin_name(self) -> str:
        return "recall_pgfts"


# --- the ranker on its own ------------------------------------------------------------------


def test_it_is_persistent_and_refuses_a_storage_that_is_not_postgres(
        pg_storage: PostgresStorage, tmp_path: Path) -> None:
    assert isinstance(_ranker(pg_storage, tmp_path), PersistentRanker)
    assert pg_capable(pg_storage) and not pg_capable(object())
    with pytest.raises(RankerUnavailable, match="postgresql://"):
        PgftsFactory()(TOKENIZER, str(tmp_path), storage=None)


def test_rebuild_batches_replace_everything_and_report_progress(
        pg_storage: PostgresStorage, tmp_path: Path) -> None:
    ranker = _ranker(pg_storage, tmp_path)
    assert ranker.needs_rebuild()
    ranker.upsert(IndexDoc("old.md", "Old", "stale words"))
    docs = [IndexDoc(f"n/{i:04d}.md", f"Note {i}", f"common word{i % 7}") for i in range(1203)]
    seen: list[int] = []
    assert ranker.rebuild(iter(docs), seen.append) == 1203
    assert seen[0] == 500 and seen[-1] == 1203
    assert not ranker.needs_rebuild()
    assert ranker.paths() == sorted(d.path for d in docs)
    assert ranker.search([WeightedTerm("stale")], 5) == []
    assert len(ranker.search([WeightedTerm("common")], 2000)) == 1203


def test_title_weight_prior_freshness_and_path_ties(pg_storage: PostgresStorage,
                                                    tmp_path: Path) -> None:
    ranker = _ranker(pg_storage, tmp_path)
    ranker.set_today(730000)
    ranker.upsert_many([
        IndexDoc("b.md", "Other", "Other\nOther\nshared kiwi"),
        IndexDoc("a.md", "Other", "Other\nOther\nshared kiwi"),
        IndexDoc("title.md", "Kiwi", "Kiwi\nKiwi\nshared"),
        IndexDoc("heavy.md", "Other", "Other\nOther\nshared kiwi", weight=3.0),
        IndexDoc("zero.md", "Kiwi", "Kiwi kiwi", weight=0.0),
    ])
    old = "1990-01-01"  # day 726468: years before "today", at the freshness floor
    ranker.upsert(IndexDoc("stale.md", "Other", "Other\nOther\nshared kiwi", updated=old))
    found = ranker.search([WeightedTerm("kiwi")], 10)
    paths = [p for p, _ in found]
    assert paths[:2] == ["title.md", "heavy.md"]
    assert paths[2:4] == ["a.md", "b.md"] and found[2][1] == found[3][1]
    assert paths[4] == "stale.md" and found[4][1] == pytest.approx(found[3][1] * 0.5, rel=1e-5)
    assert "zero.md" not in paths


def test_an_empty_index_over_a_vault_with_notes_asks_for_a_rebuild_once(
        pg_storage: PostgresStorage, tmp_path: Path) -> None:
    ranker = _ranker(pg_storage, tmp_path)
    assert ranker.rebuild([]) == 0 and not ranker.needs_rebuild()
    pg_storage.write("notes/bulk.md", "# Bulk\n\nloaded around the ranker\n")
    assert ranker.needs_rebuild()  # written around the ranker: empty index, notes listed
    ranker.rebuild([])  # nothing in the corpus (as with only templates): remembered
    assert not ranker.needs_rebuild()


def test_another_tokenizer_means_a_rebuild(pg_storage: PostgresStorage, tmp_path: Path) -> None:
    ranker = _ranker(pg_storage, tmp_path)
    ranker.rebuild([IndexDoc("a.md", "A", "alpha")])
    assert not ranker.needs_rebuild()

    class Plain:
        name = "plain"

        def tokenize(self, text: str) -> list[str]:
            return text.lower().split()

    other = PgftsFactory()(Plain(), str(tmp_path), storage=pg_storage)
    assert isinstance(other, PgftsRanker) and other.needs_rebuild()


def test_odd_terms_are_stored_and_found_exactly(pg_storage: PostgresStorage,
                                                tmp_path: Path) -> None:
    class Split:
        name = "split"

        def tokenize(self, text: str) -> list[str]:
            return text.split(" ")

    ranker = PgftsFactory()(Split(), str(tmp_path), storage=pg_storage)
    odd = ["it's", "a\\b", "東京", "x:1", "c++", "'", "a|b", "!"]
    ranker.upsert(IndexDoc("odd.md", "", " ".join(odd)))
    for term in odd:
        assert [p for p, _ in ranker.search([WeightedTerm(term)], 5)] == ["odd.md"], term
    assert ranker.search([WeightedTerm("a")], 5) == []
    many = tsvector_literal([], ["w"] * 20000)
    assert many.count(",") == 255  # at most 256 positions per lexeme


# --- recall = "pgfts" end to end ------------------------------------------------------------


def _context(vault: str, home: Path, recall_name: str = "pgfts") -> EchoContext:
    config = home / "config.toml"
    home.mkdir(parents=True, exist_ok=True)
    config.write_text(f'recall = "{recall_name}"\n', encoding="utf-8")
    return create_context(vault=vault, state_dir=str(home / "state"),
                          env=isolated_env(home, ECHO_CONFIG=str(config)))


def _close(ctx: EchoContext) -> None:
    close = getattr(ctx.vault.storage, "close", None)
    if close is not None:
        close()


def test_recall_through_pgfts_and_a_replica_sees_a_capture_at_once(
        pg_schema_url: str, tmp_path: Path) -> None:
    one = _context(pg_schema_url, tmp_path / "one")
    two = _context(pg_schema_url, tmp_path / "two")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankerFallbackWarning)
            init_vault(one)
            capture(one, CaptureRequest(title="Ada Lovelace", kind="person",
                                        body="Wrote the first program for the Analytical "
                                             "Engine."))
            hits = invoke(one, "recall", {"query": "analytical engine program",
                                         "explain": True}).data.primary
            assert hits and hits[0].path.endswith("ada-lovelace.md")
            assert hits[0].explain is not None and hits[0].explain["ranker"] == "pgfts"
            assert two.ranker_upkeep.name == "pgfts"
            assert recall(two, "analytical engine").data.primary[0].path == hits[0].path
            capture(two, CaptureRequest(title="Grace Hopper", kind="person",
                                        body="Built the first compiler."))
            again = recall(one, "first compiler").data.primary  # no rebuild, no catch-up
            assert again and again[0].path.endswith("grace-hopper.md")
        assert not list((tmp_path / "one" / "state").rglob("pgfts*"))  # nothing local
    finally:
        _close(one)
        _close(two)


def _recall_twice_on_a_folder(tmp_path: Path) -> list[str]:
    """Open a folder vault with ``recall = "pgfts"`` twice (as two commands would) and
    recall a captured note; the ranker each recall used."""
    vault = tmp_path / "vault"
    vault.mkdir()
    used = []
    for n in range(2):
        ctx = _context(str(vault), tmp_path / "home")
        if n == 0:
            init_vault(ctx)
            capture(ctx, CaptureRequest(title="Grace Hopper", kind="person",
                                        body="Built the first compiler."))
        hits = invoke(ctx, "recall", {"query": "first compiler", "explain": True}).data.primary
        assert hits and hits[0].path.endswith("grace-hopper.md") and hits[0].explain
        used.append(hits[0].explain["ranker"])
    return used


def test_on_a_folder_vault_pgfts_falls_back_to_bm25_with_one_warning(tmp_path: Path) -> None:
    ranker_choice._warned.clear()
    with pytest.warns(RankerFallbackWarning, match="pgfts needs a postgresql:// vault") as seen:
        used = _recall_twice_on_a_folder(tmp_path)
    assert used == ["bm25", "bm25"]
    assert len([w for w in seen if w.category is RankerFallbackWarning]) == 1
