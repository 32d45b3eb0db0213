"""porterlite: the stemmer of SPEC §3.2, the tokenizer of SPEC §3.1, and the plugin."""

from __future__ import annotations

from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plugins.stem_porterlite
from echo_core.protocols import Tokenizer
from echo_core.testing import PluginContract, TokenizerContract
from echo_core.testing.plugin_contract import registered_names, strict_host
from plugins.stem_porterlite.stemmer import EXCEPTIONS, stem
from plugins.stem_porterlite.stopwords import STOPWORDS
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer

STEMS = [
    # families SPEC §3.2 requires to meet
    ("deploy", "deploy"), ("deployed", "deploy"), ("deployment", "deploy"),
    ("deploys", "deploy"), ("deploying", "deploy"), ("deployments", "deploy"),
    ("navigate", "navigat"), ("navigation", "navigat"), ("navigational", "navigat"),
    ("navigating", "navigat"),
    ("penalty", "penalti"), ("penalties", "penalti"),
    ("saturate", "saturat"), ("saturated", "saturat"), ("saturation", "saturat"),
    # words SPEC §3.2 says must not be over-stemmed
    ("sing", "sing"), ("news", "news"), ("bus", "bus"), ("analysis", "analysis"), ("is", "is"),
    # short or irregular words left alone
    ("this", "this"), ("was", "was"), ("thing", "thing"), ("during", "during"),
    ("string", "string"), ("red", "red"), ("bed", "bed"), ("need", "need"),
    ("species", "species"), ("business", "business"), ("status", "status"),
    ("element", "element"), ("comment", "comment"), ("session", "session"),
    ("station", "station"), ("early", "early"), ("hope", "hope"), ("hop", "hop"),
    # inflections and derivations
    ("process", "process"), ("processing", "process"), ("processed", "process"),
    ("processes", "process"), ("meeting", "meet"), ("meetings", "meet"),
    ("running", "run"), ("runs", "run"), ("run", "run"), ("happily", "happi"),
    ("happy", "happi"), ("connection", "connect"), ("connected", "connect"),
    ("connecting", "connect"), ("connects", "connect"), ("hopeful", "hopeful"),
    ("hopefulness", "hopeful"), ("organization", "organiz"), ("organize", "organiz"),
    ("organized", "organiz"), ("relational", "relat"), ("relate", "relat"),
    ("relation", "relat"), ("agreement", "agre"), ("agree", "agre"), ("agreed", "agre"),
    ("cities", "citi"), ("city", "citi"), ("studies", "studi"), ("study", "studi"),
    ("studying", "studi"), ("studied", "studi"), ("hoping", "hope"), ("hopping", "hop"),
    ("used", "use"), ("ties", "tie"), ("aliases", "alias"), ("alias", "alias"),
    ("reference", "refer"), ("referenced", "refer"), ("embedding", "embed"),
    ("embed", "embed"), ("conditional", "condit"), ("condition", "condit"),
    ("family", "famili"), ("families", "famili"), ("quickly", "quick"),
    ("carefully", "careful"), ("surprisingly", "surpris"), ("surprise", "surpris"),
]

FAMILIES = [
    ["deploy", "deployed", "deployment", "deploys", "deploying"],
    ["navigate", "navigation", "navigational", "navigating"],
    ["penalty", "penalties"],
    ["saturate", "saturated", "saturation"],
    ["process", "processing", "processed", "processes"],
    ["meeting", "meetings"],
    ["running", "runs", "run"],
    ["happily", "happy", "happiness"],
    ["connection", "connected", "connecting", "connects"],
    ["hopeful", "hopefulness"],
    ["organization", "organize", "organized"],
    ["relational", "relate", "related", "relation"],
    ["agreement", "agree", "agreed"],
    ["cities", "city"],
    ["studies", "study", "studying", "studied"],
]

DISTINCT = [
    ("news", "new"), ("sing", "se"), ("bus", "bu"), ("analysis", "analyse"),
    ("hope", "hop"), ("business", "busy"), ("this", "thi"), ("comment", "com"),
    ("session", "sess"), ("element", "ele"), ("station", "state"), ("mission", "miss"),
]


@pytest.mark.parametrize(("word", "expected"), STEMS)
def test_stem_table(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f[0])
def test_family_members_share_one_stem(family: list[str]) -> None:
    assert len({stem(w) for w in family}) == 1, {w: stem(w) for w in family}


@pytest.mark.parametrize(("word", "other"), DISTINCT)
def test_unrelated_words_keep_distinct_stems(word: str, other: str) -> None:
    assert stem(word) != stem(other)


def test_must_not_over_stem_words_are_unchanged() -> None:
    assert [stem(w) for w in ("sing", "news", "bus", "analysis", "is")] == [
        "sing", "news", "bus", "analysis", "is"
    ]


@pytest.mark.parametrize("word", ["café", "naïve", "東京", "straße", "ωmega", "résumés"])
def test_non_ascii_tokens_pass_unchanged(word: str) -> None:
    assert stem(word) == word


@pytest.mark.parametrize("word", ["k8s", "2024", "v2ed", "Deployed", "mp3s"])
def test_tokens_that_are_not_lowercase_letters_pass_unchanged(word: str) -> None:
    assert stem(word) == word


@settings(derandomize=True, max_examples=500, deadline=None)
@given(st.text(alphabet="abcdeilmnorstuyz", max_size=14))
def test_stem_never_shortens_below_three_characters(word: str) -> None:
    assert len(stem(word)) >= min(len(word), 3)


@settings(derandomize=True, max_examples=2000, deadline=None)
@given(st.text(alphabet="abcdefghilmnorstuyz", min_size=1, max_size=14))
def test_every_word_but_the_exceptions_starts_with_its_stem_but_its_last_letter(
        word: str) -> None:
    if word not in EXCEPTIONS:
        assert word.startswith(stem(word)[:-1])


@pytest.mark.parametrize("word", sorted({
    "ated", "bling", "eed", "ebbed", "sses", "ties", "ying", "ization", "ational", "ally",
    "eeing", "ably", "ement", "ings", "aye", "bye", "eyes", "oozed", "ooze", "ulation",
    "ating", "spys", "crying", "dried", "hoping", "advancing", "relational", "happily",
    "agreed", "hopping", "penalties", "sizing", "navigation", "conditionally"}))
def test_words_start_with_their_stem_but_its_last_letter(word: str) -> None:
    assert word.startswith(stem(word)[:-1])


_TEXT_WORDS = st.sampled_from([
    "deploy", "deploying", "deployments", "Deployed", "went", "gone", "go", "dying", "die",
    "lying", "tying", "skies", "sky", "news", "family", "families", "it's", "don't",
    "café", "naïve", "ﬁle", "Ωmega", "東京", "x", "a", "the", "2026", "v2", "navigation",
    "navigate", "conditional", "condition", "hoped", "hope", "bling", "ated", "ate", "ebb",
    "quickly", "quick", "ran", "run", "—", "...", "_", "-", "\n", "ating", "spys", "crying",
    "dried"])


@settings(derandomize=True, max_examples=400, deadline=None)
@given(words=st.lists(st.one_of(_TEXT_WORDS, st.text(max_size=8)), max_size=25),
       extra=st.sets(st.sampled_from(["deploy", "go", "die", "lie", "sky", "quick", "run",
                                      "navig", "ate", "bli", "ble", "famili", "zz", "spi",
                                      "cri", "dri"]),
                     max_size=4),
       keep=st.integers(0, 7))
def test_terms_among_are_exactly_the_wanted_terms_the_text_holds(
        words: list[str], extra: set[str], keep: int) -> None:
    tokenizer = PorterLiteTokenizer()
    text = " ".join(words)
    held = tokenizer.tokenize(text)
    wanted = frozenset(extra | {t for i, t in enumerate(held) if (i + keep) % 3 == 0})
    assert tokenizer.terms_among(text, wanted) == wanted & set(held)


def test_terms_among_finds_rewritten_words_and_skips_the_rest() -> None:
    tokenizer = PorterLiteTokenizer()
    text = "They went home; the dying plant, lying still. Deployments followed."
    assert tokenizer.terms_among(text, frozenset({"go", "die", "lie", "deploy", "plant"})) \
        == {"go", "die", "lie", "deploy", "plant"}
    assert tokenizer.terms_among(text, frozenset({"hous", "run"})) == set()
    # adjacent words sharing a head, at the start, the end and after runs of spaces
    assert tokenizer.terms_among("cards carts   cartoon\tcarp", frozenset(
        {"card", "cart", "cartoon", "carp"})) == {"card", "cart", "cartoon", "carp"}
    assert tokenizer.terms_among(text, frozenset()) == set()


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=12).filter(lambda w: not w.isascii()))
def test_stem_passes_any_non_ascii_token_unchanged(word: str) -> None:
    assert stem(word) == word


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", max_size=3))
def test_stem_passes_short_tokens_unchanged(word: str) -> None:
    assert stem(word) == word


# --- tokenizer ------------------------------------------------------------------------


@pytest.fixture
def porterlite() -> PorterLiteTokenizer:
    return PorterLiteTokenizer()


def test_tokenize_drops_stopwords_and_single_characters(porterlite: PorterLiteTokenizer) -> None:
    assert porterlite.tokenize("The plan is a draft and it x was ready") == [
        "plan", "draft", "readi"
    ]


def test_tokenize_lowercases(porterlite: PorterLiteTokenizer) -> None:
    assert porterlite.tokenize("KUBERNETES Cluster") == ["kubernet", "cluster"]


def test_inflections_in_text_meet(porterlite: PorterLiteTokenizer) -> None:
    assert porterlite.tokenize("Deployments deployed!") == ["deploy", "deploy"]


def test_apostrophes_join_and_hyphens_split(porterlite: PorterLiteTokenizer) -> None:
    assert porterlite.tokenize("don't skip Alice’s roll-back") == ["skip", "alic", "roll", "back"]


def test_contractions_become_stopwords(porterlite: PorterLiteTokenizer) -> None:
    assert porterlite.tokenize("I'm sure it's what we'd don't") == ["sure", "wed"]


def test_underscores_and_punctuation_split_words(porterlite: PorterLiteTokenizer) -> None:
    assert porterlite.tokenize("on_note_written/recall.index") == [
        "note", "write", "recall", "index"
    ]


def test_irregular_verb_forms_meet_their_base_form(porterlite: PorterLiteTokenizer) -> None:
    assert porterlite.tokenize("went") == porterlite.tokenize("go") == ["go"]
    assert porterlite.tokenize("wrote written writes") == ["write"] * 3
    assert porterlite.tokenize("met meeting") == ["meet", "meet"]
    assert porterlite.tokenize("left saw") == ["left", "saw"]  # ambiguous forms stay


def test_digits_are_kept_unstemmed(porterlite: PorterLiteTokenizer) -> None:
    assert porterlite.tokenize("k8s 2024 v1 5") == ["k8s", "2024", "v1"]


def test_compatibility_forms_are_normalised(porterlite: PorterLiteTokenizer) -> None:
    assert porterlite.tokenize("ﬁle ＤＥＰＬＯＹ") == porterlite.tokenize("file deploy")


def test_stopwords_are_lowercase_words_without_apostrophes() -> None:
    assert 120 <= len(STOPWORDS) <= 200
    assert all(w.isascii() and w.isalpha() and w.islower() for w in STOPWORDS)


def test_tokens_of_stopword_free_text_are_never_stopwords(
    porterlite: PorterLiteTokenizer,
) -> None:
    text = " ".join(sorted(STOPWORDS)) + " deploy"
    assert porterlite.tokenize(text) == ["deploy"]


class TestPorterLiteTokenizer(TokenizerContract):
    @pytest.fixture
    def tokenizer(self) -> Tokenizer:
        return PorterLiteTokenizer()


# --- plugin ---------------------------------------------------------------------------


class TestStemPorterlitePlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.stem_porterlite

    @pytest.fixture
    def plugin_name(self) -> str:
        return "stem_porterlite"


def test_plugin_registers_a_porterlite_tokenizer() -> None:
    host = strict_host(("stem_porterlite", plugins.stem_porterlite))
    assert registered_names(host, "register_tokenizers", "stem_porterlite") == ["porterlite"]
    tokenizer = host.collect("register_tokenizers")["porterlite"]
    assert isinstance(tokenizer, Tokenizer)
    assert tokenizer.tokenize("Deploying") == ["deploy"]
