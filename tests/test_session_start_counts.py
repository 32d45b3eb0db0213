"""The brief's session counts (SPEC §4.1, §4.2): sessions logged, and logged since the
scope was set, taken in one pass that parses each day once (issue 15: a vault with 20k
session logs must not cost a date parse per log at every session start)."""

from __future__ import annotations

import time

import pytest

from echo_core.ops.scope import count_logged, count_sessions_since, tally_sessions

LOGS = [
    "_agent/sessions/2026-02-27-1200-a.md",
    "_agent/sessions/2026-02-28-2359-b.md",
    "_agent/sessions/2026-03-01-0930-c.md",  # the minute the scope was set
    "_agent/sessions/2026-03-01-0931-d.md",
    "_agent/sessions/2026-03-01-notime.md",  # no HHMM: the start of its day
    "_agent/sessions/2026-03-01-2561-e.md",  # not a clock: the start of its day
    "_agent/sessions/older/2026-03-02-0800-f.md",  # a log in a sub-folder counts
    "_agent/sessions/2026-02-30-1000-bad.md",  # no such day: not a log
    "_agent/sessions/README.md",
    "_agent/sessions/notes.md",
]


@pytest.mark.parametrize("stamp,since", [
    ("2026-03-01T09:30:00", 2),  # later minutes only: 0931, and 03-02
    ("2026-03-01T09:30:59", 2),  # seconds do not matter
    ("2026-03-01 09:29", 3),  # a space for the T; 0930 counts now
    ("2026-03-01", 5),  # a date: that day (4 logs) and later (1)
    ("2026-03-01T09:30:00+05:00", 2),  # the offset is ignored
    ("", 7),  # never set: every log
    ("not a date", 7),  # unreadable: every log rather than hide them
    ("2026-03-03", 0),
])
def test_sessions_since_counts_logs_after_the_scope_was_set(stamp: str, since: int) -> None:
    assert tally_sessions(LOGS, stamp) == (7, since)
    assert count_sessions_since(LOGS, stamp) == since
    assert count_logged(LOGS) == 7


def test_twenty_thousand_logs_are_counted_in_milliseconds() -> None:
    logs = [f"_agent/sessions/2025-{1 + n % 12:02d}-{1 + n % 28:02d}-{n % 24:02d}00-s{n}.md"
            for n in range(20000)]
    start = time.perf_counter()
    logged, since = tally_sessions(logs, "2025-06-15T10:00:00")
    assert logged == 20000 and 0 < since < 20000
    assert time.perf_counter() - start < 0.25  # ~5 ms; a date parse per log took ~50 ms
