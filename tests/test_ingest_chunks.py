"""``split_chunks``: parts sized for recall, cut at headings, nothing lost or repeated."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from echo_core.ops.ingest_chunks import MAX, TARGET, split_chunks
from echo_core.ops.ingest_notes import demote_headings, lead_paragraph

_WORD = st.text(alphabet="abcdefghij", min_size=1, max_size=12)
_PARA = st.lists(_WORD, min_size=1, max_size=400).map(" ".join)
_BLOCK = st.one_of(_PARA, _WORD.map(lambda w: f"## {w}"))


def _words(text: str) -> list[str]:
    return text.split()


@settings(max_examples=60, deadline=None)
@given(st.lists(_BLOCK, min_size=1, max_size=40))
def test_every_word_lands_once_in_order_and_no_part_is_oversized(blocks: list[str]) -> None:
    text = "\n\n".join(blocks)
    chunks = split_chunks(text)
    assert _words(" ".join(c.text for c in chunks)) == _words(text)
    assert all(len(c.text) <= MAX + TARGET for c in chunks)
    assert all(c.text.strip() for c in chunks)


def test_a_section_starts_a_new_part_once_the_part_is_big_enough() -> None:
    para = "word " * 150  # 750 characters
    small = "word " * 40  # 200 characters
    text = f"# Doc\n\n{para}\n\n## Second\n\n{small}\n\n## Third\n\n{para}"
    chunks = split_chunks(text)
    assert [c.heading for c in chunks] == ["Doc", "Second"]
    assert chunks[1].text.startswith("## Second") and "## Third" in chunks[1].text
    assert [c.heading for c in split_chunks(text.replace(small, para))] == [
        "Doc", "Second", "Third"]


def test_a_long_paragraph_is_cut_at_sentence_ends() -> None:
    text = " ".join(f"Sentence number {i} says something useful." for i in range(200))
    chunks = split_chunks(text)
    assert len(chunks) > 3 and all(len(c.text) <= TARGET for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)


def test_code_fences_are_never_split_and_headings_inside_stay() -> None:
    text = "intro\n\n```\n# not a heading\n\nstill code\n```\n\nafter"
    assert [c.text for c in split_chunks(text)] == [text]
    assert demote_headings(text) == text
    assert demote_headings("# Top\n## Related\ntext") == (
        "## Top\n## Related (in the source)\ntext")


def test_the_lead_is_the_first_paragraph_that_is_not_a_heading() -> None:
    assert lead_paragraph("# T\n\n## S\n\nFirst para.\n\nSecond.") == "First para."
    assert len(lead_paragraph("x " * 1000)) <= 603
