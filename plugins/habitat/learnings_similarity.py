"""When two learnings say the same thing: normalised text and a near-duplicate test.

A stored learning that is a near-duplicate of one already in the store reinforces it
(``LearningStore.store``: recurrence + 1) instead of becoming a second row. The test is
deliberately narrow, "the same sentence written again", not "a related idea":

* ``normalise``: NFKC, case folded, ``n't`` spelled ``not``, every run of characters
  other than letters and digits one space. Normal forms equal but for their spaces
  (``compact``: "lock file" / "lockfile") are duplicates.
* ``words``: the words of the normal form without English stopwords, simple plurals
  folded (``tests`` -> ``test``). Word order is kept.
* ``similarity``: difflib's ratio ``2M / (|a| + |b|)`` over the two word sequences, where
  a word of one text that is a typo of a word of the other (both >= 4 letters,
  character ratio >= ``TYPO_RATIO``) counts as that word. Word level, so swapping two
  names ("use pnpm, not npm" / "use npm, not pnpm") scores low, where a character ratio
  would score 0.97; typo-tolerant, so "commiting" still matches "committing".
* Two guards make a pair distinct whatever its score: the negations differ ("always
  deploy on Fridays" / "never deploy on Fridays") or the numbers differ ("port 8080" /
  "port 8081"): one word that flips the meaning.

``THRESHOLD`` (0.85): a pair is a near-duplicate at or above it. Calibrated on the table
in ``tests/test_habitat_learn_similarity.py``: one typo, a dropped or added article or
filler word, punctuation, case and spacing stay above it (0.86-1.0 for sentences of 5 or
more words); a changed subject or object of a short sentence, a reordering of its names
and any paraphrase fall below (<= 0.8). A long sentence (10+ words) with one word
replaced can still pass: the store keeps every variant's own text in its provenance, so
nothing said is lost when two are merged.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence

from echo_core import fold_plural

__all__ = ["THRESHOLD", "TYPO_RATIO", "compact", "is_near_duplicate", "normalise",
           "similarity", "words"]

THRESHOLD = 0.85
TYPO_RATIO = 0.8
#: Words a typo must have at least this many letters to be forgiven (a changed letter
#: in a short word is usually another word: "bat" / "bit").
TYPO_MIN_LEN = 4

_NOT_RE = re.compile(r"(\w)n[’']t\b")
_NON_WORD_RE = re.compile(r"[\W_]+", re.UNICODE)
_DIGIT_RE = re.compile(r"\d")

NEGATIONS = frozenset({"not", "no", "never", "none", "nothing", "nobody", "nowhere",
                       "neither", "nor", "without", "cannot", "avoid", "dont", "don"})
STOPWORDS = frozenset({
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "by", "for", "with",
    "from", "into", "onto", "as", "is", "are", "was", "were", "be", "been", "being", "it",
    "its", "this", "that", "these", "those", "there", "here", "we", "you", "they", "i",
    "he", "she", "our", "your", "their", "my", "me", "us", "them", "so", "then", "than",
    "do", "does", "did", "just", "also", "very", "really", "should", "would", "could",
    "can", "will", "shall", "may", "might", "must", "has", "have", "had", "which", "who",
    "when", "where", "what", "how", "if", "but", "because", "about", "all", "any", "some",
    "each", "every", "first", "instead",
} - NEGATIONS)


def normalise(text: str) -> str:
    """The normal form of ``text`` (module docstring): one line of lowercase words."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = _NOT_RE.sub(r"\1 not", folded)
    return " ".join(_NON_WORD_RE.sub(" ", folded).split())


def compact(normal: str) -> str:
    """A normal form without its spaces: "lock file" and "lockfile" are one text."""
    return normal.replace(" ", "")


def words(normal: str) -> list[str]:
    """The content words of a normal form, in order (stopwords dropped, plurals folded;
    negations kept)."""
    return [fold_plural(w) for w in normal.split() if w not in STOPWORDS]


def _guard(words_: Sequence[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The negations and the numbers of a text: a pair must agree on both."""
    return (frozenset(w for w in words_ if w in NEGATIONS),
            frozenset(w for w in words_ if _DIGIT_RE.search(w)))


def _typo_of(word: str, others: Sequence[str]) -> str | None:
    """The word of ``others`` that ``word`` is a typo of, or None."""
    if len(word) < TYPO_MIN_LEN or _DIGIT_RE.search(word):
        return None
    best, best_ratio = None, TYPO_RATIO
    for other in others:
        if len(other) < TYPO_MIN_LEN or abs(len(other) - len(word)) > 2:
            continue
        ratio = difflib.SequenceMatcher(None, word, other, autojunk=False).ratio()
        if ratio >= best_ratio:
            best, best_ratio = other, ratio
    return best


def similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """The typo-tolerant word-sequence ratio of two ``words`` lists (0.0..1.0; 0.0 when
    either is empty or the guards differ)."""
    if not a or not b:
        return 0.0
    if _guard(a) != _guard(b):
        return 0.0
    only_a = [w for w in dict.fromkeys(a) if w not in set(b)]
    only_b = set(b) - set(a)
    mapped = {}
    for word in only_b:
        typo = _typo_of(word, only_a)
        if typo is not None:
            mapped[word] = typo
    b_seen = [mapped.get(w, w) for w in b]
    return difflib.SequenceMatcher(None, list(a), b_seen, autojunk=False).ratio()


def is_near_duplicate(a: str, b: str) -> bool:
    """Whether texts ``a`` and ``b`` say the same thing (module docstring)."""
    na, nb = normalise(a), normalise(b)
    if compact(na) == compact(nb):
        return True
    return similarity(words(na), words(nb)) >= THRESHOLD
