"""The recall operation (SPEC §3.1) independent of the ranker: ranker choice by config,
graph expansion along wikilinks, budget packing, validation."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from echo_core import RankerFallbackWarning, hookimpl
from echo_core.context import EchoContext, create_context
from echo_core.errors import EchoError, ExitCode
from echo_core.ops.init import init_vault
from echo_core.ops.recall import recall
from echo_core.plugins import create_host
from echo_core.protocols import IndexDoc, Tokenizer, WeightedTerm


class CountingRanker:
    """A trivial in-memory ranker: score = sum of weight x term count."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.docs: dict[str, Counter[str]] = {}

    def upsert(self, doc: IndexDoc) -> None:
        self.docs[doc.path] = Counter(self.tokenizer.tokenize(doc.text))

    def remove(self, path: str) -> None:
        self.docs.pop(path, None)

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        scores: dict[str, float] = {}
        for path, counts in self.docs.items():
            plain = sum(t.weight * counts[t.term] for t in terms if not t.boost_only)
            if plain > 0:
                scores[path] = plain + sum(t.weight * counts[t.term] for t in terms if t.boost_only)
        return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]


class CountingRankerPlugin:
    """Registers ``counting`` (one in-memory index; the core builds it and keeps it
    current, so the plugin has no note listeners)."""

    def __init__(self) -> None:
        self.ranker: CountingRanker | None = None

    @hookimpl
    def register_rankers(self, register: Any) -> None:
        def factory(tokenizer: Tokenizer, state_dir: str) -> CountingRanker:
            if self.ranker is None:
                self.ranker = CountingRanker(tokenizer)
            return self.ranker

        register("counting", factory)


def make_ctx(tmp_path: Path, recall_name: str = "counting") -> EchoContext:
    config = tmp_path / "config.toml"
    config.write_text(f'recall = "{recall_name}"\n')
    env = {"HOME": str(tmp_path / "home"), "ECHO_CONFIG": str(config), "ECHO_TODAY": "2026-03-01"}
    host = create_host(env=env, extra=[("counting_ranker", CountingRankerPlugin())])
    ctx = create_context(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "state"),
                         env=env, host=host)
    init_vault(ctx)
    return ctx


def put(ctx: EchoContext, path: str, title: str, body: str) -> None:
    ctx.vault.write_note(path, f"---\ntype: concept\nstatus: active\nupdated: 2026-02-01\n---\n"
                               f"# {title}\n\n{body}\n")


def test_config_recall_name_picks_the_ranker(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    put(ctx, "resources/concepts/kiwi.md", "Kiwi", "kiwi kiwi orchard notes")
    put(ctx, "resources/concepts/apple.md", "Apple", "apple orchard")
    result = recall(ctx, "kiwi", include_linked=False).data
    assert type(ctx.ranker).__name__ == "CountingRanker"
    assert [h.path for h in result.primary] == ["resources/concepts/kiwi.md"]


def test_an_unknown_ranker_name_falls_back_to_bm25_with_a_warning(tmp_path: Path) -> None:
    from echo_core import ranker_choice

    ranker_choice._warned.clear()  # once per process: this test must see it
    with pytest.warns(RankerFallbackWarning, match="'nonexistent' cannot run here"):
        ctx = make_ctx(tmp_path, recall_name="nonexistent")
    put(ctx, "resources/concepts/kiwi.md", "Kiwi", "kiwi orchard notes")
    found = recall(ctx, "kiwi", include_linked=False).data
    assert [h.path for h in found.primary] == ["resources/concepts/kiwi.md"]
    assert ctx.ranker_upkeep.name == "bm25"


def test_linked_notes_follow_wikilinks_two_hops_with_decay(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    put(ctx, "resources/concepts/alpha.md", "Alpha", "zebra topic here. See [[beta]].")
    put(ctx, "resources/concepts/beta.md", "Beta", "second hop. See [[gamma]].")
    put(ctx, "resources/concepts/gamma.md", "Gamma", "third. See [[delta]].")
    put(ctx, "resources/concepts/delta.md", "Delta", "too far away")
    result = recall(ctx, "zebra").data
    assert [h.path for h in result.primary] == ["resources/concepts/alpha.md"]
    top = result.primary[0].score
    linked = {h.path: h for h in result.linked}
    assert set(linked) == {"resources/concepts/beta.md", "resources/concepts/gamma.md"}
    assert linked["resources/concepts/beta.md"].via == "resources/concepts/alpha.md"
    assert linked["resources/concepts/gamma.md"].via == "resources/concepts/beta.md"
    assert linked["resources/concepts/beta.md"].score == pytest.approx(top * 0.6, rel=1e-4)
    assert linked["resources/concepts/gamma.md"].score == pytest.approx(top * 0.36, rel=1e-4)


def test_no_linked_leaves_neighbours_out(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    put(ctx, "resources/concepts/alpha.md", "Alpha", "zebra. See [[beta]].")
    put(ctx, "resources/concepts/beta.md", "Beta", "other")
    assert recall(ctx, "zebra", include_linked=False).data.linked == ()


def test_budget_packs_by_score_and_marks_truncation(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    for i in range(6):
        put(ctx, f"resources/concepts/n{i}.md", f"Note {i}",
            " ".join(["walrus"] * (6 - i)) + " " + "filler words go here " * 20)
    full = recall(ctx, "walrus", include_linked=False).data
    assert len(full.primary) == 6 and not full.truncated
    packed = recall(ctx, "walrus", include_linked=False, budget_chars=500).data
    assert packed.truncated is True
    assert sum(len(h.excerpt) for h in packed.primary) <= 500
    assert [h.path for h in packed.primary] == [h.path for h in full.primary][: len(packed.primary)]
    assert packed.primary[-1].truncated and packed.primary[-1].excerpt.endswith("…")
    assert packed.dropped == 6 - len(packed.primary)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"query": "   "}, "query"), ({"query": "x", "limit": 0}, "limit"),
    ({"query": "x", "limit": 51}, "limit"), ({"query": "x", "budget_chars": 50}, "budget_chars"),
])
def test_invalid_arguments_name_the_field(tmp_path: Path, kwargs: dict[str, Any], field: str) -> None:
    ctx = make_ctx(tmp_path)
    query = kwargs.pop("query")
    with pytest.raises(EchoError) as info:
        recall(ctx, query, **kwargs)
    assert info.value.code == ExitCode.USAGE and info.value.message.startswith(field)


def test_templates_inbox_and_readmes_are_not_recalled(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    ctx.vault.write_note("templates/special.md", "# quokka template\n")
    ctx.vault.write_note("inbox/captures/inbox.md", "- 2026-03-01: quokka sighting\n")
    ctx.vault.write_note("resources/README.md", "# quokka readme\n")
    put(ctx, "resources/concepts/quokka.md", "Quokka", "a small marsupial")
    paths = [h.path for h in recall(ctx, "quokka", include_linked=False).data.primary]
    assert paths == ["resources/concepts/quokka.md"]
