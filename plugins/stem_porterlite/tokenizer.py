"""``PorterLiteTokenizer``: lowercase words, stopwords removed, length > 1, stemmed.

The same at index and query time (SPEC §3.1). One compiled-regex ``findall`` over the
lowercased text, then one loop calling the cached ``stem``; no per-token allocation beyond
the result list.
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
        if not text.isascii():
            text = unicodedata.normalize("NFKC", text)
        words = _WORD.findall(text.lower().replace("'", "").replace("\u2019", ""))
        stopwords = STOPWORDS
        stem_ = stem
        base = IRREGULAR_FORMS.get
        return [stem_(base(w, w)) for w in words if len(w) > 1 and w not in stopwords]

    def __repr__(self) -> str:
        return "PorterLiteTokenizer()"
