"""When two learnings are one: the near-duplicate test's calibration table
(``plugins.habitat.learnings_similarity``, THRESHOLD 0.85)."""

from __future__ import annotations

import pytest

from plugins.habitat.learnings_similarity import (
    THRESHOLD,
    is_near_duplicate,
    normalise,
    similarity,
    words,
)

#: Pairs that say the same thing: case, punctuation, spacing, a typo, an article, a
#: filler word, a plural, "don't" / "do not", "lockfile" / "lock file".
SAME = [
    ("Run the tests with pytest -n 2 before committing.",
     "run tests with pytest -n 2 before commiting"),
    ("Run tests with pytest before committing", "Run unit tests with pytest before committing"),
    ("Don't deploy on Fridays", "Do not deploy on Fridays!"),
    ("The flaky test in parser.py times out under load",
     "The flaky tests in parser.py time out under load"),
    ("The flaky test in parser.py times out under load",
     "The flaky test in parser.py times out under heavy load"),
    ("The CI cache key must include the lockfile hash",
     "The CI cache key must include the lock file hash"),
    ("Use  `uv run`   for every script in this repo", "use uv run for every script in this repo"),
    ("Der Build braucht Node.", "der build braucht node"),
]

#: Pairs that differ in what they say: a negation, a number, names swapped, the subject
#: or object changed, a paraphrase.
DIFFERENT = [
    ("Never deploy on Fridays", "Always deploy on Fridays"),
    ("Use port 8080 for the dev server", "Use port 8081 for the dev server"),
    ("Use pnpm instead of npm in this repo", "Use npm instead of pnpm in this repo"),
    ("Deploy staging with ansible", "Deploy production with ansible"),
    ("Ada prefers concise status updates", "Ada prefers detailed status updates"),
    ("Migrations must run before the web tier is deployed",
     "Deploy the web tier only after the migrations ran"),
    ("The build needs Node 20", "The build needs Node 18"),
    ("Run the linter before pushing", "Run the formatter before pushing"),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_the_same_sentence_written_again_is_a_near_duplicate(a: str, b: str) -> None:
    assert is_near_duplicate(a, b) and is_near_duplicate(b, a)


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_a_pair_that_says_something_else_is_not(a: str, b: str) -> None:
    assert not is_near_duplicate(a, b) and not is_near_duplicate(b, a)


def test_swapped_names_score_low_where_a_character_ratio_would_not() -> None:
    import difflib

    a, b = "Use pnpm instead of npm in this repo", "Use npm instead of pnpm in this repo"
    assert difflib.SequenceMatcher(None, a, b).ratio() > 0.95
    assert similarity(words(normalise(a)), words(normalise(b))) < THRESHOLD


def test_normal_form_folds_case_width_punctuation_and_contractions() -> None:
    assert normalise("Don’t  USE  ｆｕｌｌ-width, OK?") == "do not use full width ok"


def test_empty_and_stopword_only_texts_are_near_duplicates_only_when_equal() -> None:
    assert similarity([], ["x"]) == 0.0
    assert is_near_duplicate("The.", "the")
    assert not is_near_duplicate("the", "of")


def test_huge_texts_compare_in_bounded_time() -> None:
    import time

    a = " ".join(f"word{i % 500}" for i in range(4000))
    b = a.replace("word7 ", "wrod7 ")
    started = time.perf_counter()
    is_near_duplicate(a, b)
    assert time.perf_counter() - started < 5.0
