"""``PorterLiteTokenizer``: lowercase words, stopwords removed, length > 1, stemmed.

The same at index and query time (SPEC §3.1). ASCII text (nearly all of it) is split
without a regex: one ``bytes.translate`` lowercases it, deletes apostrophes and turns every
other non-alphanumeric byte into a space, then ``split``. Each word maps to its term through
a word -> term dict (dropped words included as ""), so a word seen before costs one lookup
done in C (``map``); only new words go through ``stem``. Other text: NFKC, then a regex.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Set as AbstractSet
from typing import Any

from plugins.stem_porterlite.irregular import IRREGULAR_FORMS
from plugins.stem_porterlite.stemmer import EXCEPTIONS, stem
from plugins.stem_porterlite.stopwords import STOPWORDS

__all__ = ["PorterLiteTokenizer"]

#: A word: a run of letters or digits in any script (``\w`` without the underscore), so
#: hyphens, underscores, slashes and punctuation split words ("follow-up" -> follow, up).
_WORD = re.compile(r"[^\W_]+")
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
    """The term of one lowercased word, "" when the word is dropped."""
    if len(word) <= 1 or word in STOPWORDS:
        return ""
    return stem(IRREGULAR_FORMS.get(word, word))


@functools.lru_cache(maxsize=256)
def _candidate_patterns(wanted: frozenset[str]) -> tuple[re.Pattern[bytes], ...]:
    """Regexes over ASCII text lowered as ``words`` lowers it (after a space) that find,
    in group 1, every word that could have a term in ``wanted``: one per wanted term's
    ``_head``, one per rewritten word whose term is wanted. Each is
    compiled once per process (``_starting``, ``_whole``), not once per query."""
    heads = {_head(t) for t in wanted if t.isascii()}
    found = [_starting(head.encode()) for head in sorted(heads)]
    rewritten = _rewritten_by_term()
    found += [_whole(word.encode()) for t in wanted for word in rewritten.get(t, ())]
    return tuple(found)


def _head(term: str) -> str:
    """What every word whose term is ``term`` starts with (but a rewritten word): the
    term without its last character; a two-character term comes only from itself."""
    return term[:-1] if len(term) >= 3 else term


@functools.lru_cache(maxsize=4096)
def _starting(head: bytes) -> re.Pattern[bytes]:
    """The words starting with ``head``. Lowered text separates words by spaces only, and
    a leading literal space lets the engine skip ahead fast (5x a lookbehind)."""
    return re.compile(b" (" + re.escape(head) + b"[a-z0-9]*)")


@functools.lru_cache(maxsize=1024)
def _whole(word: bytes) -> re.Pattern[bytes]:
    """The word ``word`` itself."""
    return re.compile(b" (" + re.escape(word) + b")(?![a-z0-9])")


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
    Result: the terms in text order, each non-empty, lowercase and whitespace-free.
    Deterministic, stateless, never raises for any ``str``.

    ``words(text)`` and ``term(word)`` are its two halves: the lowercased words (``bytes``
    for ASCII text, ``str`` otherwise) and each one's term ("" for a dropped word).
    """

    name = "porterlite"

    def words(self, text: str) -> list[Any]:
        """The lowercased words of ``text`` in order, none dropped yet (class docstring)."""
        if text.isascii():
            return text.encode("ascii").translate(_ASCII_TABLE, b"'").split()
        text = unicodedata.normalize("NFKC", text)
        return _WORD.findall(text.lower().replace("'", "").replace("\u2019", ""))

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
        exceptions), so for ASCII text a regex per wanted term finds the words starting
        like it, and one per rewritten word whose term is wanted."""
        if not wanted:
            return set()
        if not text.isascii():
            return {term for term in self.tokenize(text) if term in wanted}
        lowered = b" " + text.encode("ascii").translate(_ASCII_TABLE, b"'")
        asked = wanted if isinstance(wanted, frozenset) else frozenset(wanted)
        return {term for pattern in _candidate_patterns(asked)
                for word in pattern.findall(lowered) if (term := self.term(word)) in wanted}

    def __repr__(self) -> str:
        return "PorterLiteTokenizer()"
