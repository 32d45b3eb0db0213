"""How fast this machine runs Python right now, printed beside every timing.

The machine these benches run on is a shared virtual one: the same pure-Python work
has been seen to take anywhere from 1x to 2x as long from one minute to the next. A
timing means little without that, so each bench prints ``speed_line()``: the best of
three runs of a fixed loop (10M additions), to compare against ``QUIET_S``, its time
on a quiet run of the project's reference machine (2 cores, Python 3.11).
"""

from __future__ import annotations

import time

QUIET_S = 0.35


def reference_seconds(runs: int = 3) -> float:
    """Best of ``runs`` timings of the fixed loop."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        total = 0
        for i in range(10_000_000):
            total += i
        best = min(best, time.perf_counter() - start)
    return best


def speed_line() -> str:
    """One line: the loop's time now and on a quiet machine, and their ratio."""
    now = reference_seconds()
    return (f"machine speed: reference loop {now:.2f} s now, {QUIET_S:.2f} s quiet "
            f"({now / QUIET_S:.2f}x slower than quiet)")
