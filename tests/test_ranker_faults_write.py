"""A ranker plugin that fails never costs a note write (echo_core/ranker_faults.py,
ranker_choice.py, ranker_upkeep.py, ranker_marks.py).

The core builds and updates the active ranker right after each note write (the write is
durable by then). A factory or ``upsert`` that raised used to escape the write: capture
exited 1 with a traceback, its intent left half done, and the next capture failed while
finishing that intent, before writing anything of its own (a capture lost). Now the
write stands, the user is warned naming the ranker and what to do, and the ranker is
marked so recall catches up."""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from echo_core import RankerFallbackWarning, hookimpl
from echo_core import ranker_choice as choice
from echo_core.context import EchoContext, create_context
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.capture_result import CaptureResult
from echo_core.ops.init import init_vault
from echo_core.ops.recall import recall
from echo_core.ops.write_intent import pending_intents
from echo_core.plugins import create_host
from echo_core.protocols import IndexDoc, Tokenizer, WeightedTerm
from echo_core.ranker_faults import RankerFaultWarning
from echo_core.ranker_marks import marks_folder
from tests.capture_kit import isolated_env
from tests.test_recall import CountingRanker

NAN = float("nan")


class FaultyRanker(CountingRanker):
    """A plain ranker failing as its plugin's ``mode`` says."""

    def __init__(self, tokenizer: Tokenizer, plugin: FaultyPlugin) -> None:
        super().__init__(tokenizer)
        self.plugin = plugin

    def upsert(self, doc: IndexDoc) -> None:
        if self.plugin.mode == "upsert-raise":
            raise RuntimeError("index full")
        super().upsert(doc)

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        self.plugin.searches += 1
        mode = self.plugin.mode
        if mode == "raise":
            raise RuntimeError("ranker exploded")
        if mode == "garbage":
            return "not a list"  # type: ignore[return-value]
        found = super().search(terms, limit)
        if mode == "escape":
            return [("../../etc/passwd", 98.0), *found]
        if mode == "mixed":  # every shape fault at once, unsorted
            paths = [p for p, _ in found]
            return [(paths[0], NAN), (paths[1], -1.0), (paths[2], 2.0), ("/etc/shadow", 7.0),
                    (paths[2], 5.0), (paths[3], 0.0), (paths[3], 1.0), ("bad",),  # type: ignore[list-item]
                    (paths[4], float("inf"))]
        return found


class FaultyPersistent(FaultyRanker):
    """A persistent ranker whose "files" are the plugin's ``store`` (shared by every
    instance, as files are by processes)."""

    def __init__(self, tokenizer: Tokenizer, plugin: FaultyPlugin) -> None:
        super().__init__(tokenizer, plugin)
        self.docs = plugin.store

    def needs_rebuild(self) -> bool:
        return not self.plugin.built

    def rebuild(self, docs: Iterable[IndexDoc], progress: Any = None) -> int:
        self.plugin.rebuilds += 1
        self.docs.clear()
        for doc in docs:
            self.docs[doc.path] = Counter(self.tokenizer.tokenize(doc.text))
        self.plugin.built = True
        return len(self.docs)

    def set_today(self, today_ordinal: int) -> None:
        pass

    def paths(self) -> list[str]:
        return sorted(self.docs)


class FaultyPlugin:
    """Registers the ranker ``faulty``; ``mode`` picks the fault. Each host gets its own
    factory, so each context made by ``make_ctx`` is a new process (the core shares a
    plain ranker per factory)."""

    def __init__(self, *, persistent: bool = False) -> None:
        self.mode = ""
        self.persistent = persistent
        self.store: dict[str, Any] = {}
        self.built = False
        self.rebuilds = 0
        self.searches = 0

    @hookimpl
    def register_rankers(self, register: Any) -> None:
        def factory(tokenizer: Tokenizer, state_dir: str) -> FaultyRanker:
            return self.factory(tokenizer, state_dir)

        register("faulty", factory)

    def factory(self, tokenizer: Tokenizer, state_dir: str) -> FaultyRanker:
        if self.mode == "factory-raise":
            raise RuntimeError("factory exploded")
        kind = FaultyPersistent if self.persistent else FaultyRanker
        return kind(tokenizer, self)


def make_ctx(root: Path, plugin: object, *, strict: bool = True,
             recall_name: str = "faulty") -> EchoContext:
    """A fresh context (a new process) on the vault under ``root`` (made on first use)."""
    config = root / "config.toml"
    config.write_text(f'recall = "{recall_name}"\n', encoding="utf-8")
    env = isolated_env(root / "home", ECHO_CONFIG=str(config))
    host = create_host(env=env, strict=strict, extra=[("faulty_ranker", plugin)])
    ctx = create_context(vault=str(root / "vault"), state_dir=str(root / "state"), env=env,
                         host=host)
    if not (root / "vault").exists():
        assert init_vault(ctx).ok
    return ctx


def person(ctx: EchoContext, title: str, body: str = "x.") -> str:
    envelope = capture(ctx, CaptureRequest(title=title, kind="person", body=body))
    assert envelope.ok, envelope
    assert isinstance(envelope.data, CaptureResult)
    path = envelope.data.path
    assert path and (Path(str(ctx.config.vault.value)) / path).is_file()
    return str(path)


def paths_of(ctx: EchoContext, query: str) -> list[str]:
    return [h.path for h in recall(ctx, query, include_linked=False).data.primary]


@pytest.fixture(autouse=True)
def fresh_warnings() -> Iterator[None]:
    from echo_core import ranker_faults

    choice._warned.clear()
    ranker_faults._warned.clear()
    yield
    choice._warned.clear()
    ranker_faults._warned.clear()


def test_a_factory_that_raises_never_fails_a_capture_nor_the_next(tmp_path: Path) -> None:
    plugin = FaultyPlugin()
    make_ctx(tmp_path, plugin)  # init
    plugin.mode = "factory-raise"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        first = person(make_ctx(tmp_path, plugin), "Barbara Liskov")
        # the next capture (a new process) first finishes any interrupted one: it used
        # to fail there, so "Niklaus Wirth" was never written at all
        second = person(make_ctx(tmp_path, plugin), "Niklaus Wirth")
    seen = [w for w in seen if issubclass(w.category, RankerFallbackWarning)]
    ctx = make_ctx(tmp_path, plugin)
    assert pending_intents(ctx) == 0
    index = ctx.entities.load()
    assert index.by_path(first) is not None and index.by_path(second) is not None
    text = str(seen[0].message)
    assert "'faulty' cannot run here" in text and "RuntimeError: factory exploded" in text
    assert "tests.test_ranker_faults_write" in text and 'recall = "bm25"' in text
    daily = (tmp_path / "vault" / "journal" / "daily" / "2026-03-01.md").read_text()
    assert "[[barbara-liskov]]" in daily and "[[niklaus-wirth]]" in daily


def test_notes_written_while_bm25_stood_in_are_indexed_once_the_ranker_runs(
        tmp_path: Path) -> None:
    plugin = FaultyPlugin(persistent=True)
    assert paths_of(make_ctx(tmp_path, plugin), "kiwi") == [] and plugin.rebuilds == 1
    plugin.mode = "factory-raise"
    with pytest.warns(RankerFallbackWarning):
        written = person(make_ctx(tmp_path, plugin), "Kiwi Grower", "kiwi orchards")
    assert len(list(marks_folder(make_ctx(tmp_path, plugin).state_dir / "recall").iterdir())) == 1
    plugin.mode = ""
    ctx = make_ctx(tmp_path, plugin)
    assert paths_of(ctx, "kiwi") == [written] and plugin.rebuilds == 2
    assert paths_of(make_ctx(tmp_path, plugin), "kiwi") == [written]
    assert plugin.rebuilds == 2  # the mark is cleared by the rebuild


def test_a_failing_upsert_of_a_persistent_ranker_marks_it_for_a_rebuild(
        tmp_path: Path) -> None:
    plugin = FaultyPlugin(persistent=True)
    ctx = make_ctx(tmp_path, plugin, strict=False)
    assert paths_of(ctx, "kiwi") == [] and plugin.rebuilds == 1
    plugin.mode = "upsert-raise"
    with pytest.warns(RankerFaultWarning, match=r"'faulty' .*RuntimeError: index full.*reindex"):
        written = person(ctx, "Kiwi Grower", "kiwi orchards")
    plugin.mode = ""
    assert paths_of(ctx, "kiwi") == [written] and plugin.rebuilds == 2


def test_a_failing_upsert_of_a_plain_ranker_rebuilds_it_before_the_next_search(
        tmp_path: Path) -> None:
    plugin = FaultyPlugin()
    ctx = make_ctx(tmp_path, plugin, strict=False)
    assert paths_of(ctx, "kiwi") == []  # built in this process
    plugin.mode = "upsert-raise"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankerFaultWarning)
        written = person(ctx, "Kiwi Grower", "kiwi orchards")
    plugin.mode = ""
    assert paths_of(ctx, "kiwi") == [written]
