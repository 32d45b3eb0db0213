"""Recall excerpts (SPEC §3.1, ``echo_core.ops.excerpts``): the excerpt of a long line
shows the matched word, a cut never splits a visible character, and every cut excerpt
(ending or starting with …) is marked truncated - checked on vaults built in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.models import Hit
from echo_core.ops.excerpts import EXCERPT_CHARS, TRUNCATION_MARK, excerpt, pack, safe_cut
from echo_core.ops.recall import recall
from tests.capture_kit import VaultBox

LOREM = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 12
ACCENTED = "e\u0301" * 400  # "é" as e + combining acute, 2 code points each
FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467"  # one visible emoji, 5 code points
FLAG = "\U0001F1EB\U0001F1F7"  # one flag, 2 regional indicators


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def _excerpt(box: VaultBox, body: str, query: str) -> str:
    tokenizer = box.ctx().tokenizer
    return excerpt(f"# Note\n\n{body}\n", set(tokenizer.tokenize(query)), tokenizer)


def _shown(cut: str) -> str:
    """The text of a cut excerpt without its marks."""
    return cut.removeprefix(TRUNCATION_MARK).removesuffix(TRUNCATION_MARK)


# --- the window around the match --------------------------------------------------------

def test_recall_of_a_word_late_in_a_long_paragraph_shows_that_word(box: VaultBox) -> None:
    body = LOREM + "Finally Glorbex appears here. " + "tail words " * 5
    assert box.capture("Long paragraph", kind="concept", body=body).ok
    hit = recall(box.ctx(), "glorbex").data.primary[0]
    assert "Glorbex" in hit.excerpt and len(hit.excerpt) <= EXCERPT_CHARS
    assert hit.excerpt.startswith(TRUNCATION_MARK) and _shown(hit.excerpt) in body


def test_the_window_starts_at_a_word_a_little_before_the_match(box: VaultBox) -> None:
    body = LOREM + "Glorbex in the middle. " + LOREM
    cut = _excerpt(box, body, "glorbex")
    assert cut.startswith(TRUNCATION_MARK) and cut.endswith(TRUNCATION_MARK)
    assert len(cut) <= EXCERPT_CHARS
    lead = _shown(cut).index("Glorbex")
    assert 0 < lead <= EXCERPT_CHARS // 4 and body[body.index(_shown(cut)) - 1] == " "


def test_a_stemmed_term_is_found_in_its_word(box: VaultBox) -> None:
    cut = _excerpt(box, LOREM + "The late penalty applies. " + LOREM, "penalties")
    assert "penalty" in cut


def test_a_match_within_the_excerpt_size_keeps_the_line_start(box: VaultBox) -> None:
    body = "Glorbex first. " + LOREM
    cut = _excerpt(box, body, "glorbex")
    assert cut.startswith("Glorbex first.") and cut.endswith(TRUNCATION_MARK)


# --- grapheme-safe cuts ------------------------------------------------------------------

def test_a_cut_keeps_each_combining_mark_with_its_letter(box: VaultBox) -> None:
    cut = _excerpt(box, ACCENTED, "anything")
    shown = _shown(cut)
    assert cut.endswith(TRUNCATION_MARK) and len(cut) <= EXCERPT_CHARS
    assert shown.endswith("e\u0301") and len(shown) % 2 == 0 and ACCENTED.startswith(shown)


def test_a_cut_keeps_a_joined_emoji_whole(box: VaultBox) -> None:
    cut = _excerpt(box, FAMILY * 100, "anything")
    shown = _shown(cut)
    assert cut.endswith(TRUNCATION_MARK) and len(cut) <= EXCERPT_CHARS
    assert len(shown) % len(FAMILY) == 0 and shown.endswith(FAMILY)


@pytest.mark.parametrize(("text", "unit"), [(ACCENTED, 2), (FAMILY * 80, 5), (FLAG * 200, 2),
                                            ("a\ufe0f" * 300, 2), ("\U0001F44D\U0001F3FD" * 200, 2)])
def test_safe_cut_never_splits_a_visible_character(text: str, unit: int) -> None:
    for at in range(60):
        assert safe_cut(text, at) % unit == 0 and at - unit < safe_cut(text, at) <= at


# --- the truncated flag ------------------------------------------------------------------

def test_a_hit_whose_excerpt_was_cut_is_marked_truncated_within_the_budget() -> None:
    cut, whole = Hit("a.md", 2.0, excerpt="start…"), Hit("b.md", 1.0, excerpt="whole")
    packed = pack([cut, whole], 1000)
    assert [(h.path, h.truncated) for h in packed.hits] == [("a.md", True), ("b.md", False)]
    assert not packed.truncated and packed.dropped == 0  # nothing was cut to the budget


def test_pack_cuts_to_the_budget_without_splitting_a_character() -> None:
    packed = pack([Hit("a.md", 1.0, excerpt=ACCENTED)], 100)
    (hit,) = packed.hits
    assert hit.truncated and packed.truncated and len(hit.excerpt) <= 100
    assert _shown(hit.excerpt).endswith("e\u0301") and len(_shown(hit.excerpt)) % 2 == 0


def test_recall_with_a_budget_marks_every_excerpt_ending_in_the_mark(box: VaultBox) -> None:
    assert box.capture("Accent note", kind="concept", body=ACCENTED).ok
    assert box.capture("Emoji note", kind="concept", body=FAMILY * 100).ok
    result = recall(box.ctx(), "note", budget_chars=500).data
    assert len(result.primary) == 2
    for hit in result.primary:  # the first fits whole as made (cut to 320), the next is cut
        assert hit.excerpt.endswith(TRUNCATION_MARK) and hit.truncated, hit
