"""The recall priors of SPEC §3.1, in one place (defaults; tuned values recorded in
``bench/``). A document's score is BM25 x prior, prior = kind weight x freshness x status."""

from __future__ import annotations

import math

#: BM25 parameters.
BM25_K1 = 1.5
BM25_B = 0.75

#: Corpus weights: session logs and journal notes count less than entity notes.
SESSION_WEIGHT = 0.6
JOURNAL_WEIGHT = 0.6

#: A note whose lead (its text before the first ``##`` section) ends with a question
#: mark asks rather than tells: a chat turn "Any plans coming up?" shares the words of a
#: question put to recall yet holds no answer. Measured on the LoCoMo conversations
#: (``bench/eval_recall.py``, turn+context, 760 questions): R@10 0.7936 -> 0.7997, R@5
#: 0.709 both, multi-hop R@10 0.454 -> 0.474; 0.75-0.9 give R@10 0.7996-0.8010 (0.85,
#: the middle, was picked before the product was measured); the gold set stays at 1.00.
#: ``hybrid`` in the same run: R@5 / R@10 0.737 / 0.815 -> 0.745 / 0.821, open-domain R@5
#: 0.398 -> 0.409, but multi-hop R@5 0.393 -> 0.382 (142 questions: about 1.5 of them).
#: An index built before it takes the factor at the next rebuild (``reindex``, a full
#: sweep); a note written since gets it at once.
QUESTION_WEIGHT = 0.85

#: Status priors; unknown statuses weigh 1.0.
STATUS_WEIGHTS: dict[str, float] = {
    "active": 1.1,
    "complete": 1.0,
    "decided": 1.0,
    "on-hold": 0.8,
    "archived": 0.6,
    "superseded": 0.5,
}

#: Freshness: half-life of the age of ``updated`` in days, and its floor.
FRESHNESS_HALF_LIFE_DAYS = 180.0
FRESHNESS_FLOOR = 0.5

#: Graph expansion: score multiplier per wikilink hop, and the hop limit.
HOP_DECAY = 0.6
MAX_HOPS = 2


def status_weight(status: str) -> float:
    """The status prior (1.0 for an unknown or empty status)."""
    return STATUS_WEIGHTS.get(status.strip().lower(), 1.0) if status else 1.0


def freshness(age_days: float) -> float:
    """max(floor, 0.5 ** (age / half-life)); a future date counts as age 0."""
    return max(FRESHNESS_FLOOR, math.pow(0.5, max(age_days, 0.0) / FRESHNESS_HALF_LIFE_DAYS))
