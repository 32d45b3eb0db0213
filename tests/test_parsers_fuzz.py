"""Short seeded form of bench/fuzz_parsers.py (the 1,000,000-input run is the bench).

Every public parse and edit function of frontmatter.py and notes.py on generated notes:
no exception but the documented ``EchoError`` from an editor, and the properties hold
(parse never raises, set reads back and touches one line, appends are idempotent and land
under their heading, bytes outside the edit and line endings are kept).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.fuzz_parsers import Tally, exercise, run

T = TypeVar("T")


class DrawChooser:
    """The generator's ``Chooser`` over hypothesis draws (so failures shrink)."""

    def __init__(self, data: st.DataObject) -> None:
        self._data = data

    def choice(self, seq: Sequence[T]) -> T:
        return self._data.draw(st.sampled_from(seq))

    def randint(self, a: int, b: int) -> int:
        return self._data.draw(st.integers(a, b))


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_generated_notes_keep_every_parser_property(data: st.DataObject) -> None:
    tally = Tally()
    exercise(tally, DrawChooser(data))
    assert tally.failures == [], tally.failures


def test_seeded_bench_run_has_no_failures() -> None:
    tally = run(seed=11, start=0, n=300)
    assert tally.inputs == 300 and tally.failures == [], tally.failures
    assert not [kind for kind in tally.raised if "EchoError" not in kind], tally.raised
    assert tally.calls["append_under_heading"] > 300  # twice per input unless refused


def test_a_removed_key_whose_span_ends_in_blank_lines_is_judged_by_its_spans() -> None:
    """Seed 2026120703, input 142561: two ``tags`` keys, the second followed by comment
    and blank lines. The removal drops both spans whole; a check that matched the kept
    blank line only from the start saw a run that began mid-span."""
    tally = run(seed=2026120703, start=142561, n=1)
    assert tally.inputs == 1 and tally.failures == [], tally.failures
    assert tally.calls["remove_frontmatter_key"] >= 1
