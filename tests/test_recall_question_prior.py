"""A note whose lead only asks (its text before the first ``##`` section ends with a
question mark) weighs ``QUESTION_WEIGHT`` in recall's prior: a chat turn "Where did you
go camping?" shares the question's words yet holds no answer, and the turn that tells
("We went camping at the lake") ranks above it. ``recall --explain`` shows the factor."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core import invoke
from echo_core.corpus import asks, index_doc
from echo_core.notes import parse_note
from echo_core.scoring import QUESTION_WEIGHT
from tests.capture_kit import VaultBox


@pytest.mark.parametrize("body,asking", [
    ("# Turn\n\nWhere did you go camping?\n", True),
    ("# Turn\n\nWhere did you go?\n\nWhere did you go?\n\n## Context\n\n- We went.\n", True),
    ("Any plans?  \n", True),
    ("# Turn\n\nWe went camping. Any plans?\n", True),
    ("# Turn\n\nWe went camping at the lake.\n\n## Questions\n\n- Where next?\n", False),
    ("# Is this a question?\n\nNo: a statement.\n", False),
    ("# Only a heading?\n", False),
    ("", False),
])
def test_asks_reads_the_lead_only(body: str, asking: bool) -> None:
    assert asks(body) is asking


def test_the_index_weight_of_an_asking_note_is_lowered() -> None:
    text = "---\ntype: episodic\nstatus: complete\n---\n# Mel\n\n{}\n"
    asking = index_doc(parse_note("notes/a.md", text.format("Where did you go camping?")))
    telling = index_doc(parse_note("notes/b.md", text.format("We went camping.")))
    assert asking is not None and telling is not None
    assert asking.weight == pytest.approx(telling.weight * QUESTION_WEIGHT)
    assert QUESTION_WEIGHT < 1.0


def _note(box: VaultBox, rel: str, said: str) -> None:
    path = box.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntype: episodic\nstatus: complete\ncreated: 2026-03-01\n"
                    f"updated: 2026-03-01\n---\n# Melanie\n\n{said}\n", "utf-8")


def test_the_note_that_tells_ranks_above_the_one_that_asks(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    # the asking turn holds the query's words more often: without the prior it wins
    _note(box, "conversation/s1/d1-1.md", "Camping at the lake? Where did you go camping?")
    _note(box, "conversation/s1/d1-2.md", "We went camping at the lake last week.")
    found = invoke(box.ctx(), "recall", {"query": "where did Melanie go camping",
                                         "include_linked": False, "explain": True}).data
    paths = [h.path for h in found.primary]
    assert paths[:2] == ["conversation/s1/d1-2.md", "conversation/s1/d1-1.md"], paths
    asked = found.primary[1].explain["priors"]
    told = found.primary[0].explain["priors"]
    assert asked["question_weight"] == QUESTION_WEIGHT and told["question_weight"] == 1.0
    assert asked["prior"] == pytest.approx(told["prior"] * QUESTION_WEIGHT, rel=1e-3)
