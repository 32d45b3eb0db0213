"""A rebuild maps each distinct word to its term id once (``TermIds`` over a
``WordTokenizer``): the porterlite tokenizer's two halves compose to ``tokenize``, and an
index built that way answers exactly as one built from ``tokenize`` alone."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from echo_core import WordTokenizer
from echo_core.protocols import IndexDoc
from plugins.recall_bm25.segment_builder import SegmentBuilder, tokenized
from plugins.recall_bm25.term_ids import TermIds
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer
from tests.bm25_kit import QUERIES, corpus, make, ranking

TOK = PorterLiteTokenizer()

#: Text with the cases the tokenizer treats apart: ASCII, accents, ligatures, fullwidth
#: letters, curly apostrophes, stopwords, one-letter words, digits.
TEXT = st.text(alphabet=st.sampled_from(
    list("abcdeilnorstuy ABZ'-_.,09\n") + ["é", "ﬁ", "Ａ", "\u2019", "ü", "日", "ß"]),
    max_size=80) | st.sampled_from(["The running dogs' owners went home", "Café naïve ﬁle"])


class TermsOnly:
    """A tokenizer offering ``tokenize`` only (not a ``WordTokenizer``)."""

    name = "porterlite"

    def tokenize(self, text: str) -> list[str]:
        return TOK.tokenize(text)


def test_porterlite_is_a_word_tokenizer_and_a_plain_one_is_not() -> None:
    assert isinstance(TOK, WordTokenizer)
    assert not isinstance(TermsOnly(), WordTokenizer)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_words_then_terms_is_tokenize(text: str) -> None:
    assert [t for t in map(TOK.term, TOK.words(text)) if t] == TOK.tokenize(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(TEXT, max_size=6))
def test_term_ids_by_word_name_the_terms_of_tokenize(texts: list[str]) -> None:
    by_word, by_term = TermIds(TOK), TermIds(TermsOnly())
    for text in texts:
        words = by_word.terms()  # grows as texts come
        ids = [i for i in by_word.ids(text) if i]
        terms = by_word.terms()
        assert [terms[i - 1] for i in ids] == TOK.tokenize(text)
        assert terms[:len(words)] == words  # ids, once given, never change
        plain = by_term.ids(text)
        assert 0 not in plain
        assert [by_term.terms()[i - 1] for i in plain] == TOK.tokenize(text)


def _docs() -> list[IndexDoc]:
    docs = corpus(400)
    docs += [IndexDoc(path="notes/mixed.md", title="m", text="The Café ﬁle: zarak's and a b",
                      weight=1.0, updated="2026-05-06"),
             IndexDoc(path="notes/stop.md", title="s", text="the and of a", weight=1.0),
             IndexDoc(path=docs[3].path, title="again", text="pilen zarak", weight=1.0)]
    return docs


def test_an_index_built_by_word_ranks_as_one_built_by_term(tmp_path: Path) -> None:
    docs = _docs()
    by_word = make(tmp_path / "word")
    by_term = make(tmp_path / "term")
    by_term._tokenizer = TermsOnly()  # type: ignore[assignment]  # the builder's tokenizer
    assert by_word.rebuild(docs) == by_term.rebuild(docs) == 402
    for query in [*QUERIES, ["cafe"], ["file"], ["zarak"], ["pilen"]]:
        assert ranking(by_word, query, 1000) == ranking(by_term, query, 1000)
    assert ranking(by_word, ["file"], 10)  # the non-ASCII doc is found


def test_tokenized_elsewhere_adds_as_the_same_docs_added_here() -> None:
    docs = _docs()
    here, apart = SegmentBuilder(TOK), SegmentBuilder(TOK)
    for doc in docs[:200]:
        here.add(doc)
        apart.add(doc)
    for doc in docs[200:]:
        here.add(doc)
    apart.add_tokenized(tokenized(TOK, docs[200:]))
    a, b = here.finish(), apart.finish()
    for name in ("term_key", "term_ptr", "post_doc", "post_tf", "fwd_term", "doc_len"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name


class CountingTerms(PorterLiteTokenizer):
    """Porterlite, counting how often each word is turned into its term."""

    def __init__(self) -> None:
        self.named: dict[object, int] = {}

    def term(self, word: object) -> str:
        self.named[word] = self.named.get(word, 0) + 1
        return super().term(word)


def test_each_distinct_word_is_named_once_however_often_it_recurs() -> None:
    tok = CountingTerms()
    ids = TermIds(tok)
    texts = ["The dogs ran; the dogs barked.", "dogs and cats", "Café café CAFÉ the"]
    found = [ids.ids(text) for text in texts]
    assert set(tok.named.values()) == {1}
    assert set(tok.named) == {w for text in texts for w in tok.words(text)}
    terms = ids.terms()
    assert [[terms[i - 1] for i in row if i] for row in found] == [TOK.tokenize(t) for t in texts]
