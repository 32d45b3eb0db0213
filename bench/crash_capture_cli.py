"""CLI captures under SIGKILL (issue 11 acceptance, "Crash").

    python bench/crash_capture_cli.py [--kills 1000] [--seed 7] [--titles 30] [--loops 2]
                                      [--calibration 10] [--keep DIR]

``--loops`` kill loops run in parallel (one per core), each on its own vault, sharing the
``--kills`` between them. A loop first measures how long one CLI capture takes (the
median of ``--calibration`` unkilled runs, while the other loops do the same), then
repeats: start ``echo-memory capture TITLE -k KIND --body "<unique marker>..." --json``
on a title drawn (seeded) from ``--titles`` titles — so creates and updates mix — and
SIGKILL its process group at a uniform random instant in [0, measured duration].

A capture is *acknowledged* when its stdout holds ok JSON: it exited 0 before the kill,
or (counted apart, stricter than exit 0) printed ok and was killed before exiting.

After the kills each loop makes one more normal capture (the "next write"), then checks:
0 torn notes, every acknowledged marker in the vault exactly once (0 lost) and no marker
more than once (0 doubled), no title with two entity notes, 0 temp files or held locks
left in the vault or state dir, and the entity index matching the notes. Prints the
figures (and every hidden file found); exits 1 on any violation.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.crash_audit import VaultAudit, audit, describe_copies
from bench.crash_kit import (
    Finished,
    Sandbox,
    body_for,
    marker,
    median_seconds,
    parse_config,
    print_listing,
    print_verdict,
    run_in_folder,
    run_killing,
    subjects,
)


@attrs.frozen
class CaptureBenchConfig:
    """The knobs of one run (see the module docstring)."""

    kills: int = 1000
    seed: int = 7
    titles: int = 30
    loops: int = 2
    calibration: int = 10


@attrs.define
class LoopReport:
    """What one kill loop did and found on its vault."""

    loop: int
    window: float = 0.0  # the measured capture duration: kills land in [0, window]
    attempted: list[str] = attrs.Factory(list)  # markers of every capture started
    acked: list[str] = attrs.Factory(list)  # markers of acknowledged captures
    acked_then_killed: int = 0  # printed ok, SIGKILLed before it exited
    kills_landed: int = 0  # SIGKILLs that hit a running capture
    exits: Counter[int] = attrs.Factory(Counter)  # exit codes of captures not killed
    next_write_ok: bool = False
    result: VaultAudit | None = None

    def violations(self) -> dict[str, int]:
        """Violation name -> count, only the non-zero ones."""
        found = self.result
        if found is None:
            return {"not audited": 1}
        counts = {
            "torn notes": len(found.torn),
            "acknowledged captures lost": len(found.missing(self.acked)),
            "captures landed more than once": len(found.doubled()),
            "duplicate entity notes": found.extra_notes(),
            "leftover temp files / locks": len(found.leftovers),
            "entity index problems": len(found.index_problems),
            "next write failed": int(not self.next_write_ok),
        }
        return {name: n for name, n in counts.items() if n}


class CaptureLoop:
    """One vault and the seeded stream of captures made on it."""

    def __init__(self, root: Path, cfg: CaptureBenchConfig, loop: int) -> None:
        self.sandbox = Sandbox(root / f"loop-{loop}").init()
        self.env = self.sandbox.child_env()
        self.titles = subjects(cfg.titles)
        self.rng = random.Random(cfg.seed * 1000 + loop)
        self.report = LoopReport(loop)

    def _command(self) -> tuple[str, list[str]]:
        subject = self.rng.choice(self.titles)
        mark = marker(f"l{self.report.loop}", len(self.report.attempted))
        self.report.attempted.append(mark)
        return mark, self.sandbox.cli("capture", subject.title, "-k", subject.kind,
                                      "--body", body_for(mark), "--json")

    def _record(self, mark: str, ended: Finished) -> None:
        report = self.report
        try:
            printed = json.loads(ended.stdout) if ended.stdout.strip() else {}
        except ValueError:
            printed = {}
        if isinstance(printed, dict) and printed.get("ok") is True:
            report.acked.append(mark)
            report.acked_then_killed += ended.killed
        report.kills_landed += ended.killed
        if not ended.killed:
            report.exits[ended.returncode] += 1

    def capture(self, kill_after: float | None = None) -> Finished:
        """One capture, SIGKILLed ``kill_after`` s after its start (None: never)."""
        mark, cmd = self._command()
        kills = {} if kill_after is None else {0: kill_after}
        ended = run_killing([cmd], self.env, kills)[0]
        self._record(mark, ended)
        return ended

    def run(self, calibration: int, kills: int) -> LoopReport:
        """Measure, kill ``kills`` times, make the next write, audit."""
        self.report.window = median_seconds(self.capture() for _ in range(calibration))
        for _ in range(kills):
            self.capture(self.rng.uniform(0.0, self.report.window))
        ended = self.capture()
        self.report.next_write_ok = ended.returncode == 0
        self.report.result = audit(self.sandbox)
        return self.report


def run(cfg: CaptureBenchConfig, root: Path) -> list[LoopReport]:
    """The whole bench under ``root`` (an empty folder): one thread per kill loop."""
    shares = [cfg.kills // cfg.loops + (i < cfg.kills % cfg.loops) for i in range(cfg.loops)]
    loops = [CaptureLoop(root, cfg, i) for i in range(cfg.loops)]
    with ThreadPoolExecutor(max_workers=cfg.loops) as pool:
        return list(pool.map(lambda i: loops[i].run(cfg.calibration, shares[i]),
                             range(cfg.loops)))


def total_violations(reports: list[LoopReport]) -> dict[str, int]:
    """The violations of every loop, summed."""
    total: Counter[str] = Counter()
    for report in reports:
        total.update(report.violations())
    return dict(total)


def print_report(cfg: CaptureBenchConfig, reports: list[LoopReport]) -> None:
    print(f"crash_capture_cli: seed {cfg.seed}, {cfg.kills} SIGKILLs in {cfg.loops} parallel "
          f"loops (one vault each), {cfg.titles} titles")
    for r in reports:
        found = r.result
        assert found is not None
        print(f"loop {r.loop}: capture duration (median of {cfg.calibration}) "
              f"{r.window * 1000:.0f} ms; {len(r.attempted)} captures started, "
              f"{r.kills_landed} killed while running")
        print(f"  acknowledged {len(r.acked)} ({r.acked_then_killed} printed ok then killed); "
              f"exit codes of the rest: {dict(sorted(r.exits.items()))}; "
              f"next write ok: {r.next_write_ok}")
        print(f"  acknowledged captures: {describe_copies(found.copies(r.acked))}")
        print(f"  every capture started: {describe_copies(found.copies(r.attempted))}")
        dups = found.duplicate_notes()
        print(f"  titles with more than one entity note: {len(dups)} "
              f"({found.extra_notes()} extra notes); torn {len(found.torn)}; "
              f"index problems {len(found.index_problems)}; "
              f"leftover temp files/locks {len(found.leftovers)}; "
              f"outbox records pending {len(found.pending)}")
        print_listing("duplicate notes", [f"{t}: {', '.join(p)}" for t, p in dups.items()])
        print_listing("torn", found.torn)
        print_listing("index problems", found.index_problems)
        print_listing("leftovers", found.leftovers)
        print_listing("hidden files (leftover or by design)", found.hidden_files, limit=20)
    print_verdict(total_violations(reports),
                  "0 torn, 0 lost acknowledged, 0 doubled, 0 duplicate notes, 0 leftovers")


def main() -> None:
    cfg, keep = parse_config(CaptureBenchConfig, __doc__)
    reports = run_in_folder(keep, "crash-capture-", lambda root: run(cfg, root))
    print_report(cfg, reports)
    sys.exit(1 if total_violations(reports) else 0)


if __name__ == "__main__":
    main()
