"""The porterlite tokenizer splits runs of CJK characters (Chinese and Japanese ideographs,
kana, hangul) into overlapping character bigrams, a run of one character into itself, the
same for notes and queries: a word of two or more characters inside a sentence is a term
of the sentence. Text without CJK is tokenized as before (``test_fast_paths``)."""

from __future__ import annotations

import pytest

from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer

TOK = PorterLiteTokenizer()


def test_cjk_run_becomes_overlapping_bigrams() -> None:
    assert TOK.tokenize("我们使用东京塔") == ["我们", "们使", "使用", "用东", "东京", "京塔"]


def test_cjk_run_of_one_character_is_kept_as_itself() -> None:
    assert TOK.tokenize("部署 的 方案") == ["部署", "的", "方案"]
    assert TOK.tokenize("塔") == ["塔"]


@pytest.mark.parametrize(("word", "sentence"), [
    ("东京", "我们明天去东京看塔。"),                 # Chinese
    ("部署方案", "这是新的部署方案的草稿"),            # a four-character word
    ("東京", "来週は東京に行きます"),                  # Japanese kanji among kana
    ("カタカナ", "これはカタカナの文です"),             # katakana
    ("서울", "우리는 서울에서 만나요"),                # Korean hangul with a particle
])
def test_cjk_word_inside_a_sentence_is_a_term_of_the_sentence(word: str, sentence: str) -> None:
    query = TOK.tokenize(word)
    assert query and set(query) <= set(TOK.tokenize(sentence))


def test_cjk_kanji_and_kana_of_a_run_are_bigrammed_together() -> None:
    assert TOK.tokenize("東京に行く") == ["東京", "京に", "に行", "行く"]


def test_cjk_hangul_words_split_at_spaces() -> None:
    assert TOK.tokenize("서울에서 만나요") == ["서울", "울에", "에서", "만나", "나요"]


def test_cjk_punctuation_splits_runs() -> None:
    assert TOK.tokenize("东京。大阪、京都「奈良」・札幌") == ["东京", "大阪", "京都", "奈良", "札幌"]


def test_cjk_latin_word_inside_a_cjk_run_is_its_own_stemmed_word() -> None:
    assert TOK.tokenize("我们deploying了服务") == ["我们", "deploy", "了服", "服务"]
    assert TOK.tokenize("用Python3写") == ["用", "python3", "写"]


def test_cjk_halfwidth_and_fullwidth_forms_meet() -> None:
    assert TOK.tokenize("ﾄｳｷｮｳ") == TOK.tokenize("トウキョウ") == ["トウ", "ウキ", "キョ", "ョウ"]


def test_cjk_words_and_terms_give_the_tokens() -> None:
    """The ``WordTokenizer`` halves agree with ``tokenize`` on CJK text (the bm25 segment
    builder indexes through them)."""
    text = "Deploy 我们使用东京塔 and 서울에서 the 的 plan東京に行く"
    words = TOK.words(text)
    assert [t for t in map(TOK.term, words) if t] == TOK.tokenize(text)
    assert TOK.tokenize(text) == ["deploy", "我们", "们使", "使用", "用东", "东京", "京塔",
                                  "서울", "울에", "에서", "的", "plan", "東京", "京に", "に行", "行く"]


def test_cjk_terms_among_are_the_wanted_terms_the_text_holds() -> None:
    text = "我们明天去东京看塔 deployment"
    assert TOK.terms_among(text, frozenset({"东京", "京看", "东", "大阪", "deploy"})) == {
        "东京", "京看", "deploy"}
