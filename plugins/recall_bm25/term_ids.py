"""``TermIds``: texts to vocabulary ids for one index build.

Ids count from 1 in the order terms are first seen; 0 marks a word the tokenizer drops
(kept in place, so a text's ids line up with its words; whoever counts them removes the
zeros a batch at a time). With a ``WordTokenizer`` each distinct word is looked up once:
its id is remembered by word in a dict whose ``__missing__`` names a new word (its term,
then the term's id) the first time it is met, so one C-level ``map`` over a text's words
gives every id, a new word costing one Python call and a word met again one dict lookup
and no term string. Any other tokenizer: ``tokenize``, then each term's id.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Hashable

from echo_core import Tokenizer, WordTokenizer

__all__ = ["TermIds"]


class _WordIds(dict[Hashable, int]):
    """word -> id (0 for a dropped word); a missing word is named and stored on lookup."""

    __slots__ = ("_term", "_vocab")

    def __init__(self, term: Callable[[Hashable], str], vocab: defaultdict[str, int]) -> None:
        super().__init__()
        self._term = term
        self._vocab = vocab

    def __missing__(self, word: Hashable) -> int:
        found = self._term(word)
        self[word] = given = self._vocab[found] if found else 0
        return given


class TermIds:
    """The ids of the terms of texts (module docstring); ``vocab``: term -> id."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.vocab: defaultdict[str, int] = defaultdict(itertools.count(1).__next__)
        self._by_word: _WordIds | None = None
        self.ids: Callable[[str], list[int]]
        if isinstance(tokenizer, WordTokenizer):
            self._words = tokenizer.words
            self._by_word = _WordIds(tokenizer.term, self.vocab)
            self._id_of_word = self._by_word.__getitem__
            self.ids = self._ids_by_word
        else:
            self._tokenize = tokenizer.tokenize
            self.ids = self._ids_by_term

    def terms(self) -> list[str]:
        """Every term seen, in id order (id 1 first)."""
        return list(self.vocab)

    def clear(self) -> None:
        """Forget every term and word (the build is done)."""
        self.vocab.clear()
        if self._by_word is not None:
            self._by_word.clear()

    def _ids_by_word(self, text: str) -> list[int]:
        """The id of each word of ``text``, 0 for a dropped word."""
        return list(map(self._id_of_word, self._words(text)))

    def _ids_by_term(self, text: str) -> list[int]:
        """The id of each term of ``text`` (no 0: a tokenizer drops words itself)."""
        return list(map(self.vocab.__getitem__, self._tokenize(text)))
