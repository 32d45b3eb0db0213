"""Fast paths give the results of the straightforward code they replace: ``wikilinks``
without fences (one regex pass) and the tokenizer's ASCII regex and word -> term cache."""

from __future__ import annotations

import itertools
import re
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from echo_core.notes import _INLINE_CODE_RE, _WIKILINK_RE, _scan, wikilinks
from plugins.stem_porterlite import tokenizer as tokenizer_module
from plugins.stem_porterlite.cjk import is_cjk
from plugins.stem_porterlite.irregular import IRREGULAR_FORMS
from plugins.stem_porterlite.stemmer import stem
from plugins.stem_porterlite.stopwords import STOPWORDS
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer


def wikilinks_by_lines(text: str) -> list[str]:
    """The line-by-line scan (fences tracked), as ``wikilinks`` did before its fast path."""
    seen: dict[str, None] = {}
    for line in _scan(text, 0):
        content = line.content
        if line.in_code or "[[" not in content:
            continue
        for match in _WIKILINK_RE.finditer(_INLINE_CODE_RE.sub("", content)):
            target = re.split(r"[|#]", match.group(1), maxsplit=1)[0].rstrip("\\").strip()
            if target:
                seen.setdefault(target, None)
    return list(seen)


PIECES = ["[[", "]]", "[", "]", "`", "``", "```", "~~~", "~~", "\n", "\r\n", "\r", " ", "|", "#",
          "\\", "a", "b", "note", "Vantage", "x-y", "!", "![[", "    ", "é", "\t"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
@example("see [[a]] and `[[code]]` and [[b|alias]] [[c#h]]\r\n[[a]]\n")
@example("``` \n[[in-fence]]\n```\n[[after]]\n")
@example("[[a\r]]\n`x\r`[[y]]\n")
def test_wikilinks_equal_the_line_scan(text: str) -> None:
    assert wikilinks(text) == wikilinks_by_lines(text)


def cjk_split_reference(word: str) -> list[str]:
    """A word cut into its runs of CJK and other characters, character by character; a
    CJK run as its overlapping bigrams (itself when one character long)."""
    out: list[str] = []
    for cjk, group in itertools.groupby(word, key=is_cjk):
        run = "".join(group)
        out.extend([run[i:i + 2] for i in range(len(run) - 1)] if cjk and len(run) > 1 else [run])
    return out


def tokenize_reference(text: str) -> list[str]:
    """The tokenizer before its ASCII pattern, term cache and CJK fast path."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    words = re.findall(r"[^\W_]+", text.lower().replace("'", "").replace("\u2019", ""))
    words = [part for w in words for part in cjk_split_reference(w)]
    return [w if len(w) == 1 else stem(IRREGULAR_FORMS.get(w, w)) for w in words
            if (len(w) > 1 or is_cjk(w)) and w not in STOPWORDS]


@settings(max_examples=1500, deadline=None)
@given(st.one_of(
    st.text(max_size=80),
    st.text(alphabet=st.characters(max_codepoint=127), max_size=120),
    st.lists(st.sampled_from(["went", "the", "a", "Running", "don't", "x_y", "A1", "ﬁle",
                              "Ünïcode", "’s", "Alice's", "42", "—", "studies", " "]),
             max_size=20).map(" ".join),
    st.lists(st.sampled_from(["东京", "塔", "に行く", "서울에서", "。", "ﾄｳｷｮｳ", "々", "ー", "的",
                              "Deploying", "k8s", "the", "’", " ", "x", "ㄱ", "\u1100", "𠀀"]),
             max_size=20).map("".join),
))
def test_tokenizer_equals_the_reference(text: str) -> None:
    tokenizer = PorterLiteTokenizer()
    assert tokenizer.tokenize(text) == tokenize_reference(text)
    assert tokenizer.tokenize(text) == tokenize_reference(text)  # now from the cache


def test_term_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenizer_module, "_TERMS", {})
    monkeypatch.setattr(tokenizer_module, "_BYTE_TERMS", {})
    monkeypatch.setattr(tokenizer_module, "_TERMS_MAX", 60)
    for n in range(4):
        for text in (" ".join(f"word{i}x{n}" for i in range(50)),  # ASCII: bytes keys
                     " ".join(f"wörd{i}x{n}" for i in range(50))):  # other: str keys
            assert PorterLiteTokenizer().tokenize(text) == tokenize_reference(text)
            assert PorterLiteTokenizer().tokenize(text) == tokenize_reference(text)
        assert len(tokenizer_module._BYTE_TERMS) <= 60
        assert len(tokenizer_module._TERMS) <= 60
