"""``TokenizerContract``: the behaviour every registered ``Tokenizer`` must show.

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the ``tokenizer`` fixture::

    from echo_core.testing import TokenizerContract

    class TestMyTokenizer(TokenizerContract):
        @pytest.fixture
        def tokenizer(self):
            return MyTokenizer()
"""

from __future__ import annotations

import pytest

from echo_core.protocols import TermFinder, Tokenizer

#: Plain content words that any tokenizer must keep (in some normalised form).
CONTENT_TEXT = "Deploy the Kubernetes cluster before Friday; rollback plan ready"

#: Text mixing scripts, accents, emoji and symbols.
UNICODE_TEXT = "Café naïve résumé — 東京タワー 北京大学 🚀🧠 José Ωmega ﬁle ß straße 😀"

PUNCTUATION_ONLY = "!!! ... ,,, --- ??? ;: () [] {} \"' `~ @#$%^&* / \\ | <> += \u2014 \u00bf"


class TokenizerContract:
    """Contract tests for ``echo_core.protocols.Tokenizer``.

    Fixture to override:

    * ``tokenizer`` -> a ``Tokenizer`` instance, exactly as your plugin registers it.

    Checks: ``tokenize`` returns a ``list[str]`` of non-empty lowercase tokens; the result
    is deterministic and case-insensitive; empty, blank and punctuation-only text give
    ``[]``; unicode, emoji and CJK never raise; whitespace between words does not matter;
    very long input is handled.
    """

    @pytest.fixture
    def tokenizer(self) -> Tokenizer:
        raise NotImplementedError("override the `tokenizer` fixture to build your tokenizer")

    def test_implements_tokenizer_protocol(self, tokenizer: Tokenizer) -> None:
        assert isinstance(tokenizer, Tokenizer)

    def test_returns_a_list_of_non_empty_strings(self, tokenizer: Tokenizer) -> None:
        tokens = tokenizer.tokenize(CONTENT_TEXT)
        assert isinstance(tokens, list), f"tokenize must return a list, got {type(tokens)}"
        assert tokens, "ordinary content words must produce tokens"
        for token in tokens:
            assert isinstance(token, str) and token, f"bad token {token!r}"
            assert not any(ch.isspace() for ch in token), f"token {token!r} holds whitespace"

    def test_is_deterministic(self, tokenizer: Tokenizer) -> None:
        first = tokenizer.tokenize(CONTENT_TEXT)
        tokenizer.tokenize(UNICODE_TEXT)  # unrelated work in between must not matter
        assert tokenizer.tokenize(CONTENT_TEXT) == first
        assert tokenizer.tokenize(UNICODE_TEXT) == tokenizer.tokenize(UNICODE_TEXT)

    def test_output_is_lowercase(self, tokenizer: Tokenizer) -> None:
        for text in (CONTENT_TEXT, CONTENT_TEXT.upper(), "MixedCase CamelCase ACRONYM"):
            for token in tokenizer.tokenize(text):
                assert token == token.lower(), f"token {token!r} of {text!r} is not lowercase"

    def test_is_case_insensitive(self, tokenizer: Tokenizer) -> None:
        assert tokenizer.tokenize("Deploy") == tokenizer.tokenize("deploy")
        assert tokenizer.tokenize("DEPLOY") == tokenizer.tokenize("deploy")
        assert tokenizer.tokenize(CONTENT_TEXT.upper()) == tokenizer.tokenize(CONTENT_TEXT.lower())

    @pytest.mark.parametrize("text", ["", " ", "\n\t \r\n", PUNCTUATION_ONLY])
    def test_text_without_words_gives_no_tokens(self, tokenizer: Tokenizer, text: str) -> None:
        assert tokenizer.tokenize(text) == [], f"{text!r} should give no tokens"

    def test_unicode_emoji_and_cjk_do_not_raise(self, tokenizer: Tokenizer) -> None:
        for text in (UNICODE_TEXT, "🚀", "東京", "\u200b\ufeff", "a\x00b", "e\u0301"):
            tokens = tokenizer.tokenize(text)
            assert isinstance(tokens, list)
            assert all(isinstance(t, str) and t for t in tokens), f"bad tokens {tokens!r}"

    def test_whitespace_between_words_does_not_matter(self, tokenizer: Tokenizer) -> None:
        words = (CONTENT_TEXT + " " + UNICODE_TEXT).split()
        whole = tokenizer.tokenize(" ".join(words))
        for separator in ("  ", "\n", "\t", "\r\n", " \n\t "):
            assert tokenizer.tokenize(separator.join(words)) == whole, (
                f"joining words with {separator!r} changed the tokens"
            )
        assert tokenizer.tokenize("\n  " + " ".join(words) + "  \n") == whole

    def test_very_long_input_is_handled(self, tokenizer: Tokenizer) -> None:
        text = (CONTENT_TEXT + "\n") * 20_000 + "x" * 100_000
        tokens = tokenizer.tokenize(text)
        assert isinstance(tokens, list)
        assert len(tokens) >= 20_000, "every repetition of the content must yield tokens"

    def test_terms_among_are_the_wanted_terms_the_text_holds(self, tokenizer: Tokenizer) -> None:
        """A ``TermFinder`` (optional) answers exactly ``wanted & set(tokenize(text))``."""
        if not isinstance(tokenizer, TermFinder):
            pytest.skip("the tokenizer does not offer TermFinder.terms_among")
        texts = [CONTENT_TEXT, UNICODE_TEXT, PUNCTUATION_ONLY, CONTENT_TEXT.upper(), "",
                 "It's the deployer's deployments; they went, gone, deploying again"]
        vocabulary = {t for text in texts for t in tokenizer.tokenize(text)}
        for text in texts:
            held = set(tokenizer.tokenize(text))
            for wanted in (held, vocabulary, vocabulary - held, set(),
                           {t for i, t in enumerate(sorted(vocabulary)) if i % 3 == 0}):
                assert tokenizer.terms_among(text, frozenset(wanted)) == wanted & held, (
                    f"terms_among({text[:30]!r}, ...) differs from the tokens it holds")
