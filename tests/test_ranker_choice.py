"""Choosing the ranker (echo_core/ranker_choice.py): config ``recall`` picks it, a ranker
that cannot run here (its plugin gone, or its extra's packages: ``RankerUnavailable``)
falls back to ``bm25`` with one warning per process, a ``wraps`` factory gets the ranker
it builds on, and a ``TextRanker`` gets the query as the user wrote it."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from echo_core import (
    EchoError,
    IndexDoc,
    RankerFallbackWarning,
    RankerUnavailable,
    WeightedTerm,
    create_context,
    create_host,
    hookimpl,
    invoke,
)
from echo_core import ranker_choice as choice
from tests.capture_kit import VaultBox


class Spy:
    """A ``TextRanker`` over the ranker it wraps, recording the queries it was given."""

    queries: ClassVar[list[str]] = []

    def __init__(self, base: Any) -> None:
        self.base = base

    def __getattr__(self, name: str) -> Any:  # needs_rebuild, rebuild, set_today, paths
        return getattr(self.base, name)

    def upsert(self, doc: IndexDoc) -> None:
        self.base.upsert(doc)

    def remove(self, path: str) -> None:
        self.base.remove(path)

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        return self.base.search(terms, limit)  # type: ignore[no-any-return]

    def search_text(self, query: str, terms: Sequence[WeightedTerm],
                    limit: int) -> list[tuple[str, float]]:
        Spy.queries.append(query)
        return self.base.search(terms, limit)  # type: ignore[no-any-return]

    def needs_rebuild(self) -> bool:
        return self.base.needs_rebuild()  # type: ignore[no-any-return]

    def rebuild(self, docs: Any, progress: Any = None) -> int:
        return self.base.rebuild(docs, progress)  # type: ignore[no-any-return]

    def set_today(self, today: int) -> None:
        self.base.set_today(today)

    def paths(self) -> list[str]:
        return self.base.paths()  # type: ignore[no-any-return]


class SpyFactory:
    wraps = "bm25"

    def __call__(self, tokenizer: Any, state_dir: str, base: Any = None) -> Spy:
        assert base is not None, "a wraps factory gets the ranker it builds on"
        return Spy(base)


def _missing_factory(tokenizer: Any, state_dir: str) -> Any:
    raise RankerUnavailable("its packages are not installed: pip install 'echo-memory[x]'")


class ExtraRankers:
    @hookimpl
    def register_rankers(self, register: Any) -> None:
        register("spy", SpyFactory())
        register("missing", _missing_factory)


@pytest.fixture(autouse=True)
def fresh_warnings() -> Iterator[None]:
    choice._warned.clear()
    Spy.queries = []
    yield
    choice._warned.clear()


def _ctx(box: VaultBox, recall: str, disabled: Sequence[str] = ()) -> Any:
    folder = box.home / ".config" / "echo-memory"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(f'recall = "{recall}"\n', encoding="utf-8")
    env = box.env()
    host = create_host(env=env, disabled=disabled, extra=(("extra_rankers", ExtraRankers()),))
    return create_context(vault=str(box.vault), state_dir=str(box.state), env=env, host=host)


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    made = VaultBox(tmp_path).init()
    made.capture("Analytical Engine", kind="concept", body="Punched cards drive the mill.")
    return made


def _recall(ctx: Any, query: str = "punched cards") -> list[str]:
    found = invoke(ctx, "recall", {"query": query, "include_linked": False})
    return [h.path for h in found.data.primary]


def test_the_configured_ranker_answers_and_a_text_ranker_gets_the_query(box: VaultBox) -> None:
    ctx = _ctx(box, "spy")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RankerFallbackWarning)
        assert _recall(ctx, "Punched  cards?") and ctx.ranker_upkeep.name == "spy"
    assert Spy.queries == ["Punched  cards?"]


def test_an_unregistered_ranker_falls_back_to_bm25_with_one_warning(box: VaultBox) -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        first = _recall(_ctx(box, "gone"))
        second = _recall(_ctx(box, "gone"))
    assert first == second and first
    assert "recall = 'gone' cannot run here" in str(seen[0].message)
    assert len([w for w in seen if w.category is RankerFallbackWarning]) == 1
    assert _ctx(box, "gone").ranker_upkeep.name == "bm25"


def test_a_ranker_whose_packages_are_missing_falls_back_naming_what_to_install(
        box: VaultBox) -> None:
    ctx = _ctx(box, "missing")
    with pytest.warns(RankerFallbackWarning, match=r"pip install 'echo-memory\[x\]'"):
        found = _recall(ctx)
    assert found and ctx.ranker_upkeep.name == "bm25"


def test_the_explain_and_reindex_name_the_ranker_in_use(box: VaultBox) -> None:
    ctx = _ctx(box, "missing")
    with pytest.warns(RankerFallbackWarning):
        found = invoke(ctx, "recall", {"query": "punched", "explain": True})
    assert found.data.primary[0].explain["ranker"] == "bm25"
    assert invoke(_ctx(box, "spy"), "reindex", {}).data.ranker == "spy"


def test_without_bm25_an_unknown_ranker_still_exits_78(box: VaultBox) -> None:
    with pytest.raises(EchoError) as raised:
        _ = _ctx(box, "gone", disabled=("recall_bm25",)).ranker_upkeep
    assert raised.value.code == 78 and "recall = 'gone'" in str(raised.value)
