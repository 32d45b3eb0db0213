"""Names one typo apart (SPEC §2.2): "Grace Hoper" and "Grace Hopperr" next to "Grace Hopper".

Token-set similarity sees "hoper" and "hopper" as different words, so a misspelt name
slips past it. Here two names (their ``name_key``: case, accents and punctuation folded)
read as a typo of each other when:

* they differ only in spacing ("GraceHopper"), or
* they have the same number of words and every word that differs is one edit away
  (insert, delete, substitute or swap two neighbours: optimal string alignment
  distance) from its counterpart, that word has at least ``MIN_WORD`` letters in the
  longer spelling and neither spelling holds a digit; in all at most one edit, or two
  when the name has ``LONG_NAME`` characters or more.

So "Grace Hopper" vs "Grace Kelly" (a different word), "Ann Lee" vs "Dan Lee" (two
edits), "Jon Smith" vs "John Smith" (a four-letter word: as likely a different person),
"Vitamin A" vs "Vitamin C" and "Budget 2025" vs "Budget 2026" are names, not typos.

The edit distances are computed here, in Python (a one-shot capture would pay ~16 ms to
import a library for the few keys it compares): ``one_edit`` decides whether two words are
one edit apart and ``osa_distance`` measures the rare spacing-only pairs.
``tests/test_gate_typos.py`` checks both against rapidfuzz's optimal string alignment
distance.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

MIN_WORD = 5
LONG_NAME = 16
#: The most edits ``typo_edits`` ever accepts (how far candidates are looked for).
MAX_EDITS = 2


def _has_digit(word: str) -> bool:
    return any(c.isdigit() for c in word)


def one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` (different) are one edit apart: one character inserted,
    deleted or substituted, or two neighbours swapped (optimal string alignment)."""
    la, lb = len(a), len(b)
    if abs(la - lb) > 1 or a == b:
        return False
    if la > lb:
        a, b, la, lb = b, a, lb, la
    i = 0
    while i < la and a[i] == b[i]:
        i += 1
    if la < lb:  # one character of b is not in a
        return a[i:] == b[i + 1:]
    if a[i + 1:] == b[i + 1:]:  # one substitution
        return True
    return i + 1 < la and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:]


def osa_distance(a: str, b: str) -> int:
    """Optimal string alignment distance (edits: insert, delete, substitute, swap two
    neighbours; no substring edited twice), for two short strings."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(b)]


def typo_edits(a: str, b: str) -> int | None:
    """How many edits turn name key ``a`` into ``b`` when one reads as a typo of the
    other (see the module docstring); None when they are the same key or different names."""
    if a == b:
        return None
    if a.replace(" ", "") == b.replace(" ", ""):
        return 1 if len(a.replace(" ", "")) >= MIN_WORD else None
    words_a, words_b = a.split(), b.split()
    if len(words_a) != len(words_b):
        return None
    allowed = MAX_EDITS if max(len(a), len(b)) >= LONG_NAME else 1
    edits = 0
    for wa, wb in zip(words_a, words_b, strict=True):
        if wa == wb:
            continue
        if max(len(wa), len(wb)) < MIN_WORD or _has_digit(wa) or _has_digit(wb):
            return None
        if not one_edit(wa, wb):
            return None
        edits += 1
        if edits > allowed:
            return None
    return edits or None


@attrs.frozen
class Typo:
    """A known name ``key`` that ``mention`` misspells, ``edits`` apart, and how alike the
    two are (``score``: 1 - edits / longer length)."""

    key: str
    edits: int
    score: float


def typos_of(mention: str, keys: Iterable[str]) -> list[Typo]:
    """The ``keys`` (name keys) that name key ``mention`` reads as a typo of, closest first.
    Only keys within ``MAX_EDITS`` edits of it can be (what the search for candidates asks
    the index for: their length, and their word count or letters); a spacing-only pair
    must be too."""
    if len(mention.replace(" ", "")) < MIN_WORD:
        return []
    found = []
    for key in keys:
        edits = typo_edits(mention, key)
        if edits is None:
            continue
        if mention.replace(" ", "") == key.replace(" ", "") and \
                osa_distance(mention, key) > MAX_EDITS:  # spacing-only: near as strings too
            continue
        found.append(Typo(key, edits, 1 - edits / max(len(mention), len(key))))
    found.sort(key=lambda t: (t.edits, t.key))
    return found
