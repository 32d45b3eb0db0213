"""``PorterLiteTokenizer``: lowercase words, stopwords removed, length > 1, stemmed.

The same at index and query time (SPEC §3.1). One compiled-regex ``findall`` over the
lowercased text (an ASCII-only pattern for ASCII text: same words, half the cost), then one
loop mapping each word to its term through a word -> term dict (stopwords and dropped
words included), so a word seen before costs one dict lookup.
"""

from __future__ import annotations

import re
import unicodedata

from plugins.stem_porterlite.irregular import IRREGULAR_FORMS
from plugins.stem_porterlite.stemmer import stem
from plugins.stem_porterlite.stopwords import STOPWORDS

__all__ = ["PorterLiteTokenizer"]

#: A word: a run of letters or digits in any script (``\w`` without the underscore), so
#: hyphens, underscores, slashes and punctuation split words ("follow-up" -> follow, up).
_WORD = re.compile(r"[^\W_]+")
#: The same words in lowercased ASCII text (``[^\W_]`` is exactly ``[a-z0-9]`` there).
_ASCII_WORD = re.compile(r"[a-z0-9]+")
#: word -> term, "" for a dropped word (stopword, one character). Bounded: cleared when full.
_TERMS: dict[str, str] = {}
_TERMS_MAX = 1 << 18


def _term(word: str) -> str:
    """The term of one lowercased word, "" when the word is dropped."""
    if len(word) <= 1 or word in STOPWORDS:
        return ""
    return stem(IRREGULAR_FORMS.get(word, word))


class PorterLiteTokenizer:
    """Turns text into porterlite index terms (``echo_core.protocols.Tokenizer``).

    ``tokenize(text)``: non-ASCII text is NFKC-normalised (so "ﬁle" and fullwidth letters
    match their plain forms), then lowercased; apostrophes (``'`` and ``’``) are removed so
    "don't" -> "dont" and "Alice's" -> "alices"; words are runs of letters/digits; stopwords
    and one-character words are dropped; irregular verb forms become their base form
    ("went" -> "go", see ``irregular``); each remaining word goes through ``stem``.
    Result: the terms in text order, each non-empty, lowercase and whitespace-free.
    Deterministic, stateless, never raises for any ``str``.
    """

    name = "porterlite"

    def tokenize(self, text: str) -> list[str]:
        """Index terms of ``text`` in order (see the class docstring)."""
        if text.isascii():
            words = _ASCII_WORD.findall(text.lower().replace("'", ""))
        else:
            text = unicodedata.normalize("NFKC", text)
            words = _WORD.findall(text.lower().replace("'", "").replace("\u2019", ""))
        terms = _TERMS
        get = terms.get
        out: list[str] = []
        append = out.append
        for word in words:
            term = get(word)
            if term is None:
                if len(terms) >= _TERMS_MAX:
                    terms.clear()
                term = terms[word] = _term(word)
            if term:
                append(term)
        return out

    def __repr__(self) -> str:
        return "PorterLiteTokenizer()"
