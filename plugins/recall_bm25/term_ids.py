"""``TermIds``: texts to vocabulary ids for one index build.

Ids count from 1 in the order terms are first seen; 0 marks a word the tokenizer drops
(kept in place, so a text's ids line up with its words; whoever counts them removes the
zeros a batch at a time). With a ``WordTokenizer`` each distinct word is looked up once:
its id is remembered by word, so a word met again costs one dict lookup done in C
(``map``) and no term string. Any other tokenizer: ``tokenize``, then each term's id.
"""

from __future__ import annotations

import itertools
import operator
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence

from echo_core import Tokenizer, WordTokenizer

__all__ = ["TermIds"]


class TermIds:
    """The ids of the terms of texts (module docstring); ``vocab``: term -> id."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.vocab: defaultdict[str, int] = defaultdict(itertools.count(1).__next__)
        self._by_word: dict[Hashable, int] = {}
        self.ids: Callable[[str], list[int]]
        if isinstance(tokenizer, WordTokenizer):
            self._words: Callable[[str], Sequence[Hashable]] = tokenizer.words
            self._term: Callable[[Hashable], str] = tokenizer.term
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
        self._by_word.clear()

    def _ids_by_word(self, text: str) -> list[int]:
        """The id of each word of ``text``, 0 for a dropped word."""
        words = self._words(text)
        by_word = self._by_word
        ids = list(map(by_word.get, words))
        if None in ids:  # new words: each distinct one once, in order of first sight
            vocab, term = self.vocab, self._term
            # only the new words (picked in C), each distinct one once, in order
            for word in dict.fromkeys(itertools.compress(words, map(operator.is_, ids,
                                                                    itertools.repeat(None)))):
                found = term(word)
                by_word[word] = vocab[found] if found else 0
            return list(map(by_word.__getitem__, words))
        return ids  # type: ignore[return-value]  # no None: every word was known

    def _ids_by_term(self, text: str) -> list[int]:
        """The id of each term of ``text`` (no 0: a tokenizer drops words itself)."""
        return list(map(self.vocab.__getitem__, self._tokenize(text)))
