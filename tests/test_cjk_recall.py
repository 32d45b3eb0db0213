"""Recall of a CJK word finds the note whose sentence holds it (the tokenizer's bigrams),
and a bm25 index written by the tokenizer before bigrams is rebuilt, never searched with
the new terms as if it held them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from echo_core.ops.recall import recall
from echo_core.protocols import IndexDoc, WeightedTerm
from plugins.recall_bm25.index import Bm25Index
from plugins.recall_bm25.layout import CorruptIndex
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer
from tests.capture_kit import VaultBox

LOGGER = "plugins.recall_bm25.index"

NOTE = "resources/concepts/travel-plan.md"


@pytest.mark.parametrize(("body", "query"), [
    ("我们明天去东京看塔，然后讨论部署方案。", "东京"),
    ("我们明天去东京看塔，然后讨论部署方案。", "部署方案"),
    ("来週は大阪に行きます。", "大阪"),
    ("우리는 서울에서 만나요.", "서울"),
])
def test_cjk_recall_of_a_word_inside_a_sentence_finds_the_note(
        tmp_path: Path, body: str, query: str) -> None:
    box = VaultBox(tmp_path).init()
    assert box.capture("Travel plan", kind="concept", body=body).ok
    assert box.capture("Gearbox", kind="concept", body="The gearbox uses synthetic oil.").ok
    assert [h.path for h in recall(box.ctx(), query).data.primary] == [NOTE]


class OldPorterLite:
    """What the bm25 index recorded of the tokenizer before bigrams: the name alone
    (``keys.tokenizer_id`` of a tokenizer with no ``version``), and a CJK run as one term."""

    name = "porterlite"

    def tokenize(self, text: str) -> list[str]:
        return text.lower().split()


def test_cjk_index_built_by_the_old_tokenizer_is_rebuilt_not_mixed(tmp_path: Path) -> None:
    doc = IndexDoc(path="notes/trip.md", title="trip", text="trip 我们明天去东京看塔")
    old = Bm25Index(OldPorterLite(), str(tmp_path))
    old.rebuild([doc])
    assert [p for p, _ in old.search([WeightedTerm("我们明天去东京看塔")], 5)] == ["notes/trip.md"]
    old.close()

    new = Bm25Index(PorterLiteTokenizer(), str(tmp_path))
    assert new.needs_rebuild(), "an index of the old tokenizer must be rebuilt"
    with pytest.raises(CorruptIndex):
        new.search([WeightedTerm("东京")], 5)
    new.rebuild([doc])
    assert not new.needs_rebuild()
    assert [p for p, _ in new.search([WeightedTerm("东京")], 5)] == ["notes/trip.md"]
    new.close()


def test_cjk_a_note_change_on_an_index_of_the_old_tokenizer_waits_for_the_rebuild(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    doc = IndexDoc(path="notes/trip.md", title="trip", text="trip 我们明天去东京看塔")
    old = Bm25Index(OldPorterLite(), str(tmp_path))
    old.rebuild([doc])
    old.close()
    new = Bm25Index(PorterLiteTokenizer(), str(tmp_path))
    with caplog.at_level(logging.INFO, logger=LOGGER):
        new.upsert(IndexDoc(path="notes/osaka.md", title="osaka", text="大阪城"))
        new.remove("notes/trip.md")
    assert [r.levelno for r in caplog.records] == [logging.INFO, logging.INFO]
    assert not any(r.exc_info for r in caplog.records)
    assert new.needs_rebuild()
    new.close()
