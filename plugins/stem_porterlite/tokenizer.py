"""``PorterLiteTokenizer``: lowercase words, stopwords removed, length > 1, stemmed.

The same at index and query time (SPEC §3.1). ASCII text (nearly all of it) is split
without a regex: one ``bytes.translate`` lowercases it, deletes apostrophes and turns every
other non-alphanumeric byte into a space, then ``split``. Each word maps to its term through
a word -> term dict (dropped words included as ""), so a word seen before costs one lookup
done in C (``map``); only new words go through ``stem``. Other text: NFKC, then a regex
(another one, cutting CJK runs into bigrams, when a character is at or above U+2E80: ``cjk``).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from typing import Any

from echo_core import LazyPattern
from plugins.stem_porterlite.cjk import bigrams_spaced, is_cjk, may_hold_cjk
from plugins.stem_porterlite.irregular import IRREGULAR_FORMS
from plugins.stem_porterlite.stemmer import EXCEPTIONS, stem
from plugins.stem_porterlite.stopwords import STOPWORDS

__all__ = ["PorterLiteTokenizer"]

#: A word: a run of letters or digits in any script (``\w`` without the underscore), so
#: hyphens, underscores, slashes and punctuation split words ("follow-up" -> follow, up).
_WORD = LazyPattern(r"[^\W_]+")
#: ASCII bytes -> lowercase letters and digits kept, every other byte a space (so "_",
#: "-" and punctuation split words, exactly like ``_WORD`` on ASCII text).
_ASCII_TABLE = bytes(
    (c | 0x20 if 65 <= c <= 90 else c) if chr(c).isascii() and chr(c).isalnum() else 32
    for c in range(256)
)
#: word -> term, "" for a dropped word (stopword, one character); bytes keys for ASCII
#: text, str keys otherwise. Bounded: cleared when full.
_TERMS: dict[str, str] = {}
_BYTE_TERMS: dict[bytes, str] = {}
_TERMS_MAX = 1 << 18
#: Words whose term may not start as the word does: the irregular forms ("went" -> "go")
#: and the stemmer's fixed exceptions ("dying" -> "die"). Every other word starts with
#: its term but for the term's last character (``stemmer``), which is what lets
#: ``terms_among`` skip words.
_REWRITTEN = frozenset(IRREGULAR_FORMS) | frozenset(EXCEPTIONS)


def _term(word: str) -> str:
    """The term of one lowercased word, "" when the word is dropped (a stopword, one
    character but a CJK one: a CJK run of one character is its own term)."""
    if len(word) <= 1:
        return word if word and is_cjk(word) else ""
    if word in STOPWORDS:
        return ""
    return stem(IRREGULAR_FORMS.get(word, word))


@functools.lru_cache(maxsize=256)
def _needles(wanted: frozenset[str]) -> tuple[bytes, ...]:
    """What a word that could have a term in ``wanted`` starts with, after the space that
    precedes every word of text lowered as ``words`` lowers it (with one put in front):
    each wanted term's ``_head``, and each rewritten word whose term is wanted."""
    heads = {_head(t) for t in wanted if t.isascii()}
    rewritten = _rewritten_by_term()
    heads.update(word for t in wanted for word in rewritten.get(t, ()))
    return tuple(b" " + head.encode() for head in sorted(heads))


def _head(term: str) -> str:
    """What every word whose term is ``term`` starts with (but a rewritten word): the
    term without its last character; a two-character term comes only from itself."""
    return term[:-1] if len(term) >= 3 else term


def _words_after(lowered: bytes, needle: bytes) -> Iterator[bytes]:
    """The words of ``lowered`` (space-separated, one space in front) that start where
    ``needle`` (a space and a head) is found: a ``find`` per word, no regex to compile."""
    at = lowered.find(needle)
    while at >= 0:
        end = lowered.find(b" ", at + 1)
        if end < 0:
            end = len(lowered)
        yield lowered[at + 1:end]
        at = lowered.find(needle, end)


@functools.cache
def _rewritten_by_term() -> dict[str, list[str]]:
    """term -> the rewritten words (``_REWRITTEN``) that become it."""
    found: dict[str, list[str]] = {}
    for word in sorted(_REWRITTEN):
        term = _term(word)
        if term:
            found.setdefault(term, []).append(word)
    return found


class PorterLiteTokenizer:
    """Turns text into porterlite index terms (``echo_core.protocols.WordTokenizer``).

    ``tokenize(text)``: non-ASCII text is NFKC-normalised (so "ﬁle" and fullwidth letters
    match their plain forms), then lowercased; apostrophes (``'`` and ``’``) are removed so
    "don't" -> "dont" and "Alice's" -> "alices"; words are runs of letters/digits; stopwords
    and one-character words are dropped; irregular verb forms become their base form
    ("went" -> "go", see ``irregular``); each remaining word goes through ``stem``.
    A run of CJK characters (ideographs, kana, hangul) inside a word becomes its overlapping
    character bigrams, a run of one character that character ("东京看塔" -> 东京, 京看,
    看塔; see ``cjk``); they pass ``stem`` unchanged and are never stopwords.
    Result: the terms in text order, each non-empty, lowercase and whitespace-free.
    Deterministic, stateless, never raises for any ``str``.

    ``words(text)`` and ``term(word)`` are its two halves: the lowercased words (``bytes``
    for ASCII text, ``str`` otherwise) and each one's term ("" for a dropped word).
    """

    name = "porterlite"
    #: Changes whenever ``tokenize`` gives other terms for some text; a ranker records
    #: ``name@version`` in its index and rebuilds an index of another one (bm25:
    #: ``keys.tokenizer_id``). 2: CJK runs as bigrams (1, unrecorded: one term per run).
    version = 2

    def words(self, text: str) -> list[Any]:
        """The lowercased words of ``text`` in order, none dropped yet (class docstring)."""
        if text.isascii():
            return text.encode("ascii").translate(_ASCII_TABLE, b"'").split()
        text = unicodedata.normalize("NFKC", text).lower().replace("'", "").replace("\u2019", "")
        if may_hold_cjk(text):
            text = bigrams_spaced(text)
        return _WORD.findall(text)

    def term(self, word: Any) -> str:
        """The term of one word of ``words`` ("" for a dropped word)."""
        cache: dict[Any, str] = _TERMS if isinstance(word, str) else _BYTE_TERMS
        found = cache.get(word)
        if found is None:
            if len(cache) >= _TERMS_MAX:
                cache.clear()
            found = cache[word] = _term(word if isinstance(word, str) else word.decode())
        return found

    def tokenize(self, text: str) -> list[str]:
        """Index terms of ``text`` in order (see the class docstring)."""
        words = self.words(text)
        cache: dict[Any, str] = _TERMS if words and isinstance(words[0], str) else _BYTE_TERMS
        terms = list(map(cache.get, words))
        if None in terms:
            if len(cache) + len(terms) > _TERMS_MAX:
                cache.clear()
            for i, term in enumerate(terms):
                if term is None:
                    word = words[i]
                    terms[i] = cache[word] = _term(word if isinstance(word, str) else word.decode())
        return list(filter(None, terms))

    def terms_among(self, text: str, wanted: AbstractSet[str]) -> set[str]:
        """``wanted & set(tokenize(text))`` (``echo_core.protocols.TermFinder``), for a
        fraction of the work: only the words that could become one of ``wanted`` are
        looked at. Every word starts with its term but for the term's last character
        (``stemmer``), except a few rewritten words (irregular forms, the stemmer's
        exceptions), so for ASCII text only the words starting like a wanted term (or
        being a rewritten word whose term is wanted) are stemmed."""
        if not wanted:
            return set()
        if not text.isascii():
            return {term for term in self.tokenize(text) if term in wanted}
        lowered = b" " + text.encode("ascii").translate(_ASCII_TABLE, b"'")
        asked = wanted if isinstance(wanted, frozenset) else frozenset(wanted)
        return {term for needle in _needles(asked) for word in _words_after(lowered, needle)
                if (term := self.term(word)) in wanted}

    def __repr__(self) -> str:
        return "PorterLiteTokenizer()"
