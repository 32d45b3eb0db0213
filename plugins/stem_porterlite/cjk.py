"""CJK words for the porterlite tokenizer: runs of CJK characters become overlapping
character bigrams.

Chinese and Japanese put no spaces between words and Korean attaches particles to them,
so a run of CJK characters is not one word: "我们明天去东京看塔" holds "东京". The run is
indexed as its overlapping bigrams (我们 们明 明天 天去 去东 东京 京看 看塔), a run of one
character as that character, the same for notes and queries, so a query word of two or more
characters is found inside any run that holds it (Lucene's CJK bigram approach). Kanji,
kana and hangul in a row are one run ("東京に行く": 東京 京に に行 行く).

``bigrams_spaced(text)`` writes each CJK run as its bigrams between spaces, so the
tokenizer's plain word regex then finds them as words, in text order. Every CJK character
is at or above ``CJK_FLOOR`` (U+2E80): ``may_hold_cjk``, one regex scan, lets text below it
(ASCII, Latin, Greek, Cyrillic, ...) skip ``bigrams_spaced``, which would not change it.
"""

from __future__ import annotations

import re
from operator import add

from echo_core import LazyPattern

__all__ = ["CJK_FLOOR", "bigrams_spaced", "is_cjk", "may_hold_cjk"]

#: CJK code points, inclusive: radicals, CJK symbols (々 〆 〇), kana, bopomofo,
#: compatibility jamo, CJK extension A, unified ideographs; hangul jamo extended A; hangul
#: syllables and jamo extended B; compatibility ideographs; halfwidth kana and hangul; kana
#: supplement and extensions; ideograph extensions B and later. Hangul jamo U+1100-U+11FF
#: are left out (NFKC composes modern jamo into syllables). Only the letters among them
#: make words: punctuation (、 。 ・ 「 」) splits runs as any punctuation does.
_CJK_SPANS = ((0x2E80, 0x9FFF), (0xA960, 0xA97F), (0xAC00, 0xD7FF), (0xF900, 0xFAFF),
              (0xFF66, 0xFFDC), (0x1B000, 0x1B2FF), (0x20000, 0x3FFFF))
#: The lowest CJK code point.
CJK_FLOOR = chr(_CJK_SPANS[0][0])


def _char_class(spans: tuple[tuple[int, int], ...]) -> str:
    """The regex class body (no brackets) of the code point ``spans``."""
    return "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in spans)


def _complement(spans: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """The code points outside ``spans`` (sorted, disjoint) as spans."""
    out, start = [], 0
    for lo, hi in spans:
        out.append((start, lo - 1))
        start = hi + 1
    return (*out, (start, 0x10FFFF))


#: Any CJK code point.
_CJK = LazyPattern(f"[{_char_class(_CJK_SPANS)}]")
#: Any code point at or above ``CJK_FLOOR`` (one range: a faster scan than ``_CJK``).
_FLOOR_OR_ABOVE = LazyPattern(f"[^{_char_class(((0, _CJK_SPANS[0][0] - 1),))}]")
#: A run of CJK letters: word characters other than "_" (the tokenizer's word characters,
#: ``[^\W_]``) none of which is outside the CJK spans.
_CJK_RUN = LazyPattern(f"[^\\W_{_char_class(_complement(_CJK_SPANS))}]+")


def may_hold_cjk(text: str) -> bool:
    """Whether ``text`` holds a character at or above ``CJK_FLOOR``; False means it holds
    no CJK character, so ``bigrams_spaced(text)`` would not change it."""
    return not text.isascii() and _FLOOR_OR_ABOVE.search(text) is not None


def is_cjk(char: str) -> bool:
    """Whether the one character ``char`` is a CJK code point."""
    return char >= CJK_FLOOR and _CJK.match(char) is not None


def bigrams_spaced(text: str) -> str:
    """``text`` with each run of CJK letters replaced by its overlapping bigrams (the run
    itself when one character long), each between spaces: "用python3写东京" ->
    " 用 python3 写东 东京 ". Everything else is left as it is."""
    return _CJK_RUN.sub(_spaced, text)


def _spaced(run: re.Match[str]) -> str:
    """The bigrams of one CJK run (``bigrams_spaced``), between spaces."""
    chars = run[0]
    return f" {' '.join(map(add, chars, chars[1:])) if len(chars) > 1 else chars} "
