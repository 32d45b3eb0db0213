"""porterlite: conservative English suffix stripping (SPEC §3.2).

``stem(word) -> str`` maps a lowercase word to its index term. Contract:

* Tokens of 3 or fewer characters, and tokens that are not all lowercase ASCII letters
  (non-ASCII, digits, mixed case), are returned unchanged.
* Never shortens below 3 characters: a rule whose result would be shorter is skipped, so
  ``len(stem(w)) >= min(len(w), 3)``.
* Only the last character may differ from the word: ``w.startswith(stem(w)[:-1])`` for
  every word not in ``EXCEPTIONS`` (rules cut a suffix, a replacement is always a prefix
  of the suffix it replaces, and only a restored ``e`` or a final ``y -> i`` is new).
  ``PorterLiteTokenizer.terms_among`` relies on it.
* Pure and deterministic (cached with ``lru_cache``: it sits on the indexing hot path).

Steps, each applied at most once, in order:

1. Plurals: ``sses -> ss``, ``ies -> i`` (``ie`` for 4-letter words: ties -> tie), a final
   ``s`` dropped except after ``ss``/``us``/``is`` (status, bus, analysis, this).
2. ``-ed``/``-edly``/``-ing``/``-ingly`` removed when what is left holds a vowel (so sing,
   thing, string keep their ``ing``), then the classic restore: ``at``/``bl``/``iz`` (and
   ``nc``, so referenced meets reference) get their ``e`` back, a final double consonant
   other than l/s/z is undoubled, a short cvc word gets ``e`` (hoping -> hope).
   ``-eed``/``-eedly`` -> ``ee`` only when a consonant-vowel measure allows (agreed ->
   agree; need, speed stay).
3. One derivational pass: only the longest matching suffix is tried. Replacements go
   straight to the form the base word reaches, because there is no second pass
   (``tional -> t`` so conditional meets condition; ``tion -> t`` so navigation meets
   navigate). Suffixes that would eat most of a short word need a larger measure (Porter's
   ``m``): element, comment, capable, session, station stay whole.
4. A final ``y`` after a consonant (not the first letter) becomes ``i`` (penalty/penalties).
5. A final ``e`` is dropped unless the stem is a short cvc syllable (hope stays hope, so it
   does not meet hop; navigate -> navigat).

A few irregular words are fixed by two small tables (news, early, family, embed, ...).
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["EXCEPTIONS", "stem"]

MIN_LENGTH = 3
_VOWELS = frozenset("aeiou")

#: Whole words with a fixed stem, looked up before any rule (Porter2's exceptions, plus
#: words whose ``s``/``ly`` is not an inflection).
EXCEPTIONS: dict[str, str] = {
    "news": "news", "species": "species", "series": "series", "during": "during",
    "alias": "alias", "bias": "bias", "atlas": "atlas", "canvas": "canvas",
    "cosmos": "cosmos", "chaos": "chaos", "ethos": "ethos", "kudos": "kudos",
    "lens": "lens", "early": "early", "only": "only", "gently": "gently",
    "singly": "singly", "idly": "idly", "family": "famili", "skies": "sky",
    "dying": "die", "lying": "lie", "tying": "tie",
}

#: Words that stop after the plural step (their ``eed``/``ness``/``ed`` is not a suffix).
_INVARIANT_AFTER_PLURAL = frozenset(
    {"proceed", "exceed", "succeed", "embed", "business", "witness", "harness",
     "inning", "outing", "herring", "earring"}
)

#: Derivational suffixes, longest first; each maps to its replacement and a rule name.
_DERIVATIONAL: tuple[tuple[str, str, str], ...] = (
    ("ization", "ize", "m1"),
    ("ational", "ate", "m1"),
    ("fulness", "ful", "m1"),
    ("ousness", "ous", "m1"),
    ("iveness", "ive", "m1"),
    ("tional", "t", "tion"),
    ("ements", "e", "ement"),
    ("ement", "e", "ement"),
    ("ously", "ous", "m1"),
    ("ively", "ive", "m1"),
    ("ment", "", "m2"),
    ("ness", "", "m1"),
    ("tion", "t", "tion"),
    ("sion", "s", "m2"),
    ("ance", "", "m2"),
    ("ence", "", "m2"),
    ("able", "", "m2"),
    ("ible", "", "m2"),
    ("ally", "al", "m1"),
    ("ly", "", "ly"),
)

#: Letters before ``ly`` that mark an adverb (Porter2's li-endings, plus ``i``: happily).
_LY_ENDINGS = frozenset("cdeghkmnrti")


def _pattern(word: str) -> str:
    """``v``/``c`` per letter; ``y`` is a vowel only right after a consonant."""
    out: list[str] = []
    for ch in word:
        if ch in _VOWELS or (ch == "y" and out and out[-1] == "c"):
            out.append("v")
        else:
            out.append("c")
    return "".join(out)


def _measure(word: str) -> int:
    """Porter's ``m``: the number of vowel-run -> consonant-run transitions."""
    return _pattern(word).count("vc")


def _has_vowel(word: str) -> bool:
    return "v" in _pattern(word)


def _ends_short_syllable(word: str) -> bool:
    """Ends consonant-vowel-consonant (last not w/x/y), or is a 2-letter vowel-consonant."""
    pattern = _pattern(word)
    if len(word) == 2:
        return pattern == "vc"
    return pattern.endswith("cvc") and word[-1] not in "wxy"


def _is_short_word(word: str) -> bool:
    return _measure(word) == 1 and _ends_short_syllable(word)


def _strip_plural(word: str) -> str:
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies"):
        return word[:-2] if len(word) > 4 else word[:-1]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _restore(base: str) -> str:
    """Porter step-1b repair of a stem left by removing ``-ed``/``-ing``."""
    if base.endswith(("at", "bl", "iz", "nc")):
        return base + "e"
    if len(base) >= 2 and base[-1] == base[-2] and base[-1] not in "lsz" \
            and base[-1] not in _VOWELS:
        return base[:-1]
    if _is_short_word(base):
        return base + "e"
    return base


def _strip_inflection(word: str) -> str:
    for suffix in ("eedly", "ingly", "edly", "eed", "ing", "ed"):
        if not word.endswith(suffix):
            continue
        base = word[: -len(suffix)]
        if suffix.startswith("ee"):
            candidate = base + "ee" if _measure(base) >= 1 else word
        elif _has_vowel(base):
            candidate = _restore(base)
        else:
            candidate = word
        return candidate if len(candidate) >= MIN_LENGTH else word
    return word


def _derivational_allowed(rule: str, base: str) -> bool:
    if len(base) < 2:
        return False
    if rule == "m1":
        return _measure(base) >= 1
    if rule == "m2":
        return _measure(base) >= 2
    if rule == "tion":  # -ation words need less: relation -> relat, but station stays
        return _measure(base + "t") >= 2 or (base.endswith("a") and _measure(base[:-1]) >= 1)
    if rule == "ement":  # agreement -> agree, statement -> state; element stays
        return len(base) >= MIN_LENGTH and _measure(base) >= 1
    # "ly": an adverb ending and a real stem (quickly, happily, carefully, endlessly).
    ending_ok = base[-1] in _LY_ENDINGS or base.endswith(("ful", "ss"))
    return ending_ok and _measure(base) >= 1


def _strip_derivational(word: str) -> str:
    for suffix, replacement, rule in _DERIVATIONAL:
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            candidate = base + replacement
            if len(candidate) >= MIN_LENGTH and _derivational_allowed(rule, base):
                return candidate
            return word  # only the longest match is considered
    return word


def _y_to_i(word: str) -> str:
    if word.endswith("y") and len(word) > 2 and word[-2] not in _VOWELS:
        return word[:-1] + "i"
    return word


def _drop_final_e(word: str) -> str:
    if not word.endswith("e") or len(word) <= MIN_LENGTH:
        return word
    base = word[:-1]
    m = _measure(base)
    if m >= 2 or (m == 1 and not _ends_short_syllable(base)):
        return base
    return word


@lru_cache(maxsize=1 << 17)
def stem(word: str) -> str:
    """The porterlite stem of ``word`` (lowercase ASCII letters; anything else unchanged).

    Result: a string of at least ``min(len(word), 3)`` characters; the same input always
    gives the same output. No errors, no side effects.
    """
    if len(word) <= MIN_LENGTH or not (word.isascii() and word.isalpha() and word.islower()):
        return word
    fixed = EXCEPTIONS.get(word)
    if fixed is not None:
        return fixed
    result = _strip_plural(word)
    if result in _INVARIANT_AFTER_PLURAL:
        return result
    result = _strip_inflection(result)
    result = _strip_derivational(result)
    result = _y_to_i(result)
    result = _drop_final_e(result)
    return result if len(result) >= MIN_LENGTH else word
