"""Names one typo apart (SPEC §2.2): "Grace Hoper" and "Grace Hopperr" next to "Grace Hopper".

Token-set similarity sees "hoper" and "hopper" as different words, so a misspelt name
slips past it. Here two names (their ``name_key``: case, accents and punctuation folded)
read as a typo of each other when:

* they differ only in spacing ("GraceHopper"), or
* they have the same number of words and every word that differs is one edit away
  (insert, delete, substitute or swap two neighbours: optimal string alignment distance,
  by rapidfuzz) from its counterpart, that word has at least ``MIN_WORD`` letters in the
  longer spelling and neither spelling holds a digit; in all at most one edit, or two
  when the name has ``LONG_NAME`` characters or more.

So "Grace Hopper" vs "Grace Kelly" (a different word), "Ann Lee" vs "Dan Lee" (two
edits), "Jon Smith" vs "John Smith" (a four-letter word: as likely a different person),
"Vitamin A" vs "Vitamin C" and "Budget 2025" vs "Budget 2026" are names, not typos.

rapidfuzz is imported when the gate first runs, never at start-up.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

MIN_WORD = 5
LONG_NAME = 16
#: The most edits ``typo_edits`` ever accepts (what candidate search asks rapidfuzz for).
MAX_EDITS = 2


def _has_digit(word: str) -> bool:
    return any(c.isdigit() for c in word)


def typo_edits(a: str, b: str) -> int | None:
    """How many edits turn name key ``a`` into ``b`` when one reads as a typo of the
    other (see the module docstring); None when they are the same key or different names."""
    from rapidfuzz.distance import OSA

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
        distance = int(OSA.distance(wa, wb, score_cutoff=1))
        if distance > 1:
            return None
        edits += distance
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
    rapidfuzz narrows ``keys`` to those within ``MAX_EDITS`` edits (one C pass), then
    ``typo_edits`` decides."""
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    if len(mention.replace(" ", "")) < MIN_WORD:
        return []
    found = []
    for key, _distance, _index in process.extract(mention, list(keys), scorer=OSA.distance,
                                                  score_cutoff=MAX_EDITS, limit=None):
        edits = typo_edits(mention, key)
        if edits is not None:
            found.append(Typo(key, edits, 1 - edits / max(len(mention), len(key))))
    found.sort(key=lambda t: (t.edits, t.key))
    return found
