"""``SimpleTokenizer``: a plain ``Tokenizer`` for a plugin's tests (it passes
``TokenizerContract``), so a ranker's suite needs no built-in plugin::

    from echo_core.testing import RankerContract, SimpleTokenizer

    ranker = MyRanker(SimpleTokenizer(), str(tmp_path))

``TaggingTokenizer`` is one whose terms differ from every word of the text:
``RankerContract`` hands it to a ranker factory to see that the ranker indexes through the
tokenizer it is given, not by splitting ``IndexDoc.text`` its own way.
"""

from __future__ import annotations

import re

#: A word: a run of letters and digits (underscores and punctuation separate words).
_WORD = re.compile(r"[^\W_]+")


class SimpleTokenizer:
    """Terms are the words of the text (runs of letters and digits), lowercased, in
    order; nothing is dropped or stemmed. ``tokenize("Falcon, HARBOR!")`` is
    ``["falcon", "harbor"]``."""

    def tokenize(self, text: str) -> list[str]:
        """The lowercased words of ``text`` in order."""
        return [word.lower() for word in _WORD.findall(text)]


class TaggingTokenizer(SimpleTokenizer):
    """``SimpleTokenizer``'s terms with ``tag`` in front: ``"Falcon"`` -> ``"tagfalcon"``.
    No word of a text is one of its terms, so a ranker finds a document by them only when
    it indexed the document through this tokenizer."""

    TAG = "tag"

    def tokenize(self, text: str) -> list[str]:
        """``SimpleTokenizer.tokenize`` with each term tagged."""
        return [self.TAG + word for word in super().tokenize(text)]
