"""Outbox replay under SIGKILL with 4 concurrent flushers (issue 11, "Flush"): every
queued capture lands exactly once — no body twice, none missing, no second note for a
title, nothing left pending, no torn note, the entity index matching the notes.

The short seeded form of ``bench/crash_flush.py`` (which runs 1,000 records)."""

from __future__ import annotations

from pathlib import Path

from bench.crash_flush import FlushBenchConfig, print_report, run


def test_four_concurrent_flushers_killed_at_random_instants_land_every_queued_capture_once(
    tmp_path: Path,
) -> None:
    cfg = FlushBenchConfig(records=60, batch=30, vault_records=60, flushers=4, kills=2,
                           seed=20261201, titles=30, max_rounds=6, min_replays=60,
                           min_kills=1, extra_vaults=6)
    report = run(cfg, tmp_path)
    print_report(report)  # the figures, shown by pytest when the test fails
    assert report.kills_landed >= 1, "no SIGKILL hit a running flusher: nothing was tested"
    assert report.violations() == {}
