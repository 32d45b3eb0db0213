"""Outbox replay under SIGKILL and concurrent flushers (issue 11 acceptance, "Flush").

    python bench/crash_flush.py [--records 1000] [--batch 20] [--vault-records 100]
        [--flushers 4] [--kills 2] [--seed 11] [--titles 30] [--max-rounds 8]
        [--min-replays 1000] [--min-kills 1] [--extra-vaults 6] [--keep DIR]

Queues ``--records`` captures (each with a unique body marker, over ``--titles`` titles,
so creates and updates mix; a fresh vault every ``--vault-records`` records so creates
keep coming) in batches of ``--batch``, through the public offline path
(``queue_capture``, as ``capture`` queues). Each batch is then flushed in
rounds: ``--flushers`` concurrent ``echo-memory flush --json`` processes, of which 1 to
``--kills`` (seeded) get a SIGKILL at a uniform random instant within the measured
duration of a flush; rounds repeat until nothing is pending (or ``--max-rounds``).

The kill window is measured first on a scratch vault: the longest of ``--flushers``
concurrent flushes of an empty outbox (E) and of a full batch (F); a round with p records
pending uses E + (F - E) * p / batch, and F follows the longest unkilled flusher of the
latest full round (so the window tracks the machine's load).

Afterwards: every queued marker must be in the vault exactly once, no title may have two
entity notes, nothing may be pending, no note torn, the entity index must match the notes,
at least ``--min-replays`` replays must have been recorded (state lines appended to the
outbox during the rounds), and at least ``--min-kills`` SIGKILLs must have hit a running
flusher. A kill can arrive after its flusher exited (the one that took the lock did the
work; the others left early): while too few have landed, the run goes on with up to
``--extra-vaults`` more vaults of ``--vault-records`` records, so a short run still tests
what it claims. Prints the figures; exits 1 on any violation.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.crash_audit import VaultAudit, audit, describe_copies, merge_audits
from bench.crash_kit import (
    Finished,
    Sandbox,
    Subject,
    body_for,
    marker,
    parse_config,
    print_listing,
    print_verdict,
    run_in_folder,
    run_killing,
    subjects,
)
from echo_core.models import CaptureRequest
from echo_core.ops.outbox_queue import queue_capture
from echo_core.protocols import BackendUnavailable
from plugins.queue_outbox.outbox import FILE_NAME as OUTBOX_FILE
from plugins.queue_outbox.outbox import OutboxQueue


@attrs.frozen
class FlushBenchConfig:
    """The knobs of one run (see the module docstring)."""

    records: int = 1000
    batch: int = 20
    vault_records: int = 100
    flushers: int = 4
    kills: int = 2
    seed: int = 11
    titles: int = 30
    max_rounds: int = 8
    min_replays: int = 1000
    min_kills: int = 1
    extra_vaults: int = 6


@attrs.define
class FlushBenchReport:
    """The figures of one run; ``violations()`` is empty when the acceptance holds."""

    config: FlushBenchConfig
    window: tuple[float, float, float] = (0.0, 0.0, 0.0)  # E, smallest and largest F
    vaults: int = 0
    queued: list[str] = attrs.Factory(list)
    rounds: int = 0
    kills_landed: int = 0  # SIGKILLs that hit a running flusher
    kills_late: int = 0  # the flusher had already exited
    replays: int = 0  # replay outcomes recorded in the outbox during the rounds
    compactions: int = 0  # rounds in which the outbox was compacted (replays: lower bound)
    undrained_batches: int = 0
    hung: int = 0  # flushers that outlived the per-process timeout (killed for it)
    exits: Counter[int] = attrs.Factory(Counter)
    result: VaultAudit | None = None

    def violations(self) -> dict[str, int]:
        """Violation name -> count, only the non-zero ones."""
        found = self.result
        if found is None:
            return {"not audited": 1}
        copies = found.copies(self.queued)
        counts = {
            "captures landed more than once": sum(n for k, n in copies.items() if k > 1),
            "captures missing": copies.get(0, 0),
            "duplicate entity notes": found.extra_notes(),
            "records still pending": len(found.pending),
            "torn notes": len(found.torn),
            "entity index problems": len(found.index_problems),
            "replays short of the target": max(0, self.config.min_replays - self.replays),
            "SIGKILLs that hit a flusher, short of the target":
                max(0, self.config.min_kills - self.kills_landed),
        }
        return {name: n for name, n in counts.items() if n}


def queue_batch(sandbox: Sandbox, titles: list[Subject], rng: random.Random, first: int,
                count: int) -> list[str]:
    """Queue ``count`` captures numbered from ``first``; their markers."""
    ctx = sandbox.ctx()
    marks = []
    for n in range(first, first + count):
        subject, mark = rng.choice(titles), marker("f", n)
        request = CaptureRequest(title=subject.title, kind=subject.kind, body=body_for(mark))
        envelope = queue_capture(ctx, request, BackendUnavailable("vault down (crash_flush bench)"))
        if envelope.action != "queued":
            raise RuntimeError(f"could not queue capture {n}: {envelope.message}")
        marks.append(mark)
    return marks


def recorded_outcomes(state_dir: Path) -> int:
    """Replay outcomes (state lines) in the outbox file now. The queue has no API for its
    history, so this reads the plugin's documented NDJSON format."""
    try:
        raw = (state_dir / OUTBOX_FILE).read_bytes()
    except FileNotFoundError:
        return 0
    count = 0
    for line in raw.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        count += isinstance(item, dict) and item.get("kind") == "state"
    return count


@attrs.define
class KillWindow:
    """How long a round of concurrent flushes lasts, measured: E for an empty outbox, F
    for a full batch; F follows the longest unkilled flusher of the latest full round."""

    empty: float
    full: float
    full_seen: list[float] = attrs.Factory(list)

    def for_pending(self, pending: int, batch: int) -> float:
        """E + (F - E) * pending / batch."""
        return self.empty + max(0.0, self.full - self.empty) * pending / batch

    def observe(self, pending: int, batch: int, ended: list[Finished]) -> None:
        survivors = [e.seconds for e in ended if not e.killed and not e.hung]
        if pending == batch and survivors:
            self.full = max(survivors)
            self.full_seen.append(self.full)


def measure_window(sandbox: Sandbox, cfg: FlushBenchConfig) -> KillWindow:
    """The longest of ``flushers`` concurrent unkilled flushes of an empty outbox and of
    a full batch, on ``sandbox`` (a scratch vault)."""
    sandbox.init()
    cmds = [sandbox.cli("flush", "--json")] * cfg.flushers
    env = sandbox.child_env()
    empty = max(r.seconds for r in run_killing(cmds, env, {}))
    queue_batch(sandbox, subjects(cfg.titles), random.Random(cfg.seed), 0, cfg.batch)
    full = max(r.seconds for r in run_killing(cmds, env, {}))
    return KillWindow(empty, max(full, empty), [full])


def flush_round(sandbox: Sandbox, cfg: FlushBenchConfig, rng: random.Random,
                window: float) -> tuple[int, list[Finished]]:
    """One round: ``flushers`` concurrent flushes, 1..``kills`` of them SIGKILLed at a
    uniform instant in [0, ``window``]; (kills scheduled, how each flusher ended)."""
    victims = rng.sample(range(cfg.flushers), rng.randint(1, min(cfg.kills, cfg.flushers)))
    kills = {v: rng.uniform(0.0, window) for v in victims}
    cmds = [sandbox.cli("flush", "--json")] * cfg.flushers
    return len(kills), run_killing(cmds, sandbox.child_env(), kills)


def flush_until_drained(sandbox: Sandbox, cfg: FlushBenchConfig, rng: random.Random,
                        window: KillWindow, report: FlushBenchReport) -> None:
    """Rounds on ``sandbox`` until nothing is pending or ``max_rounds`` were run."""
    state_dir = sandbox.state_dir()
    queue = OutboxQueue(str(state_dir))
    for _ in range(cfg.max_rounds):
        pending = len(queue.pending())
        if not pending:
            return
        before = recorded_outcomes(state_dir)
        scheduled, ended = flush_round(sandbox, cfg, rng, window.for_pending(pending, cfg.batch))
        after = recorded_outcomes(state_dir)
        window.observe(pending, cfg.batch, ended)
        report.compactions += after < before
        report.replays += after - before if after >= before else after
        report.rounds += 1
        report.kills_landed += sum(e.killed for e in ended)
        report.kills_late += scheduled - sum(e.killed for e in ended)
        report.exits.update(e.returncode for e in ended)
        report.hung += sum(e.hung for e in ended)
    report.undrained_batches += bool(queue.pending())


def run(cfg: FlushBenchConfig, root: Path) -> FlushBenchReport:
    """The whole bench under ``root`` (an empty folder): a fresh vault per
    ``vault_records`` records (so every vault sees its titles created, then updated)."""
    report = FlushBenchReport(cfg)
    window = measure_window(Sandbox(root / "calibration"), cfg)
    titles, rng = subjects(cfg.titles), random.Random(cfg.seed)
    audits: dict[str, VaultAudit] = {}
    target = cfg.records
    while len(report.queued) < target:
        name = f"vault-{len(audits)}"
        sandbox = Sandbox(root / name).init()
        end = min(target, len(report.queued) + cfg.vault_records)
        while len(report.queued) < end:
            count = min(cfg.batch, end - len(report.queued))
            report.queued += queue_batch(sandbox, titles, rng, len(report.queued), count)
            flush_until_drained(sandbox, cfg, rng, window, report)
        audits[name] = audit(sandbox)
        if (len(report.queued) >= target and report.kills_landed < cfg.min_kills
                and target < cfg.records + cfg.extra_vaults * cfg.vault_records):
            target = len(report.queued) + cfg.vault_records  # one more vault
    report.window = (window.empty, min(window.full_seen), max(window.full_seen))
    report.vaults = len(audits)
    report.result = merge_audits(audits)
    return report


def print_report(report: FlushBenchReport) -> None:
    cfg, found = report.config, report.result
    assert found is not None
    print(f"crash_flush: seed {cfg.seed}, {cfg.flushers} concurrent flushers, "
          f"{len(report.queued)} queued captures over {cfg.titles} titles "
          f"in batches of {cfg.batch}")
    empty, low, high = report.window
    print(f"  {report.vaults} vaults ({cfg.vault_records} records each); kill window: "
          f"{empty * 1000:.0f} ms (empty outbox), {low * 1000:.0f}-{high * 1000:.0f} ms "
          f"(full batch, as measured along the run)")
    print(f"  rounds {report.rounds}, SIGKILLs that hit a running flusher "
          f"{report.kills_landed} (late, after it exited: {report.kills_late}), batches not drained {report.undrained_batches}")
    print(f"  SIGKILLs that hit a running flusher: target {cfg.min_kills}; "
          f"{len(report.queued)} captures queued for a target of {cfg.records}")
    print(f"  replays recorded: {report.replays} (target {cfg.min_replays}"
          + (f"; outbox compacted in {report.compactions} rounds, a lower bound)"
             if report.compactions else ")"))
    print(f"  flusher exit codes: {dict(sorted(report.exits.items()))}, "
          f"hung past the timeout: {report.hung}")
    print(f"  queued captures: {describe_copies(found.copies(report.queued))}")
    dups = found.duplicate_notes()
    print(f"  titles with more than one entity note: {len(dups)} "
          f"({found.extra_notes()} extra notes)")
    print(f"  pending {len(found.pending)}, torn {len(found.torn)}, "
          f"index problems {len(found.index_problems)}, leftover temp files/locks "
          f"{len(found.leftovers)} (not part of this acceptance)")
    print_listing("duplicate notes", [f"{t}: {', '.join(p)}" for t, p in dups.items()])
    print_listing("still pending", found.pending)
    print_listing("torn", found.torn)
    print_listing("index problems", found.index_problems)
    print_listing("leftovers", found.leftovers)
    print_verdict(report.violations(), "every queued capture landed exactly once")


def main() -> None:
    cfg, keep = parse_config(FlushBenchConfig, __doc__)
    report = run_in_folder(keep, "crash-flush-", lambda root: run(cfg, root))
    print_report(report)
    sys.exit(1 if report.violations() else 0)


if __name__ == "__main__":
    main()
