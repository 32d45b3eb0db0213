"""``NoteViews``: recall's memo of parsed notes gives exactly what parsing the text gives,
never a view of other text, and stays within its bound."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from echo_core.frontmatter import parse_frontmatter
from echo_core.notes import wikilinks
from echo_core.ops.excerpts import body_excerpt
from echo_core.ops.note_views import NoteViews, parse_view
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer

TOKENIZER = PorterLiteTokenizer()
NOTE = """---
type: person
updated: 2026-03-01
status: active
---
# Ada Lovelace

## Facts
- Wrote the first program for the [[analytical-engine]].
- Worked with [[charles-babbage|Babbage]] on deploying punched cards.
"""

_LINE = st.one_of(
    st.sampled_from(["# Heading", "---", "", "[[a]], [[b]]", "- deploying engines",
                     "navigation of the service", "See [[ada-lovelace]] about cards"]),
    st.text(alphabet="abc deploying navigation[]#-\n", max_size=40))


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(_LINE, max_size=30),
       terms=st.sets(st.sampled_from(["deploy", "navig", "card", "abc", "servic"]), max_size=3))
def test_a_views_excerpt_equals_the_excerpt_of_the_parsed_body(lines: list[str],
                                                                terms: set[str]) -> None:
    text = "---\ntype: note\n---\n" + "\n".join(lines)
    views = NoteViews()
    expected = body_excerpt(parse_frontmatter(text)[1], terms, TOKENIZER)
    assert views.view(text).excerpt(terms, TOKENIZER) == expected
    assert views.view(text).excerpt(terms, TOKENIZER) == expected  # memoised line terms
    assert list(views.view(text).links()) == wikilinks(text)


def test_one_view_asked_by_different_queries_answers_each_as_the_body_does() -> None:
    text = NOTE + "- Navigation of the analytical engine.\n- Deploying the cards again.\n"
    view = NoteViews().view(text)
    body = parse_frontmatter(text)[1]
    for terms in ({"deploy"}, {"navig", "engin"}, {"card"}, {"deploy"}, set(), {"zzz"}):
        assert view.excerpt(terms, TOKENIZER) == body_excerpt(body, terms, TOKENIZER)


def test_a_view_carries_the_frontmatter_fields_recall_shows() -> None:
    view = parse_view(NOTE)
    assert (view.type, view.updated, view.status) == ("person", "2026-03-01", "active")
    assert view.links() == ("analytical-engine", "charles-babbage")
    assert "deploying punched cards" in view.excerpt({"deploy"}, TOKENIZER)


def test_the_same_text_gets_the_same_view_and_changed_text_a_new_one() -> None:
    views = NoteViews()
    first = views.view(NOTE)
    assert views.view(str(NOTE)) is first
    edited = NOTE.replace("status: active", "status: archived")
    assert views.view(edited) is not first and views.view(edited).status == "archived"
    assert views.view(NOTE).status == "active"


def test_the_memo_keeps_only_the_most_recently_used_views() -> None:
    views = NoteViews(max_views=3)
    texts = [f"note {i}\n" for i in range(5)]
    kept = {t: views.view(t) for t in texts[:3]}
    views.view(texts[0])  # used again: now the most recent
    views.view(texts[3])
    views.view(texts[4])
    assert len(views) == 3
    assert views.view(texts[0]) is kept[texts[0]]
    assert views.view(texts[1]) is not kept[texts[1]]  # dropped, parsed afresh


def test_a_huge_text_is_parsed_but_not_kept() -> None:
    views = NoteViews()
    huge = "word " * 50_000
    assert views.view(huge).lines and len(views) == 0


def test_the_memo_holds_no_more_characters_than_its_bound() -> None:
    views = NoteViews(max_chars=100)
    texts = [f"{i:02d} " + "x" * 37 + "\n" for i in range(4)]  # 41 characters each
    kept = [views.view(t) for t in texts]
    assert len(views) == 2  # 82 characters; a third would pass 100
    assert views.view(texts[3]) is kept[3] and views.view(texts[2]) is kept[2]
    assert views.view(texts[0]) is not kept[0]
