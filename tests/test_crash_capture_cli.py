"""CLI captures SIGKILLed at random instants (issue 11, "Crash"): creates and updates over
30 titles leave 0 torn notes, 0 acknowledged captures lost, 0 captures doubled, 0 duplicate
entity notes, 0 temp files or held locks after the next write, and an entity index that
matches the notes.

The short seeded form of ``bench/crash_capture_cli.py`` (which runs 1,000 kills)."""

from __future__ import annotations

from pathlib import Path

from bench.crash_capture_cli import CaptureBenchConfig, print_report, run, total_violations


def test_cli_captures_killed_at_random_instants_leave_nothing_torn_lost_doubled_or_behind(
    tmp_path: Path,
) -> None:
    cfg = CaptureBenchConfig(kills=40, seed=20261201, titles=30, loops=2, calibration=3)
    reports = run(cfg, tmp_path)
    print_report(cfg, reports)  # the figures, shown by pytest when the test fails
    assert sum(r.kills_landed for r in reports) >= cfg.kills // 2, "most kills must hit a capture"
    assert total_violations(reports) == {}
