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


def _counted_one_by_one(paths: list[str], stamp: str) -> tuple[int, int]:
    """The module docstring's rule applied to each path on its own (the reference)."""
    import datetime as dt

    text = stamp.strip().replace(" ", "T")
    try:
        since = dt.datetime.fromisoformat(text) if text else None
    except ValueError:
        since = None
    logged = later = 0
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        try:
            day = dt.date.fromisoformat(name[:10])
        except ValueError:
            continue
        logged += 1
        clock = name[10:15]
        minute = 0
        if len(clock) == 5 and clock[0] == "-" and clock[1:].isdigit():
            hour, mins = int(clock[1:3]), int(clock[3:5])
            minute = hour * 60 + mins if hour < 24 and mins < 60 else 0
        if since is None or day > since.date():
            later += 1
        elif day == since.date() and ("T" not in text
                                      or minute > since.hour * 60 + since.minute):
            later += 1
    return logged, later


@pytest.mark.parametrize("seed", range(12))
def test_the_counts_equal_a_one_by_one_count_of_the_same_logs(seed: int) -> None:
    import random

    rng = random.Random(seed)
    folders = (["_agent/sessions"] if seed % 2 else
               ["_agent/sessions", "_agent/sessions/older", "elsewhere"])
    days = ["2026-02-28", "2026-03-01", "2026-03-02", "2026-02-30", "2026-3-01", "x"]
    clocks = ["-0929", "-0930", "-0931", "-2400", "-12", "", "-notime", "-2359"]
    logs = [f"{rng.choice(folders)}/{rng.choice(days)}{rng.choice(clocks)}-n{n}.md"
            for n in range(rng.randrange(0, 300))]
    if seed == 0:
        logs += ["noslash.md", "2026-03-01-0945-top.md"]
    for stamp in ("2026-03-01T09:30:00", "2026-03-01", "", "garbage", "2026-02-28 23:58"):
        assert tally_sessions(logs, stamp) == _counted_one_by_one(logs, stamp), stamp
        assert tally_sessions(iter(logs), stamp) == _counted_one_by_one(logs, stamp)
