"""Full ``sweep --apply`` throughput on generated vaults (issue 14 target: >= 10k notes/s).

    python bench/perf_full_sweep.py [--sizes 10000 100000] [--keep DIR]

Per size: a vault from ``bench.synthetic_vault.build_recall_vault`` (entity notes,
session logs, journal notes, frontmatter, wikilinks), hand-edited (``hand_edit``: 1% of
the notes stripped of their frontmatter, the entity index deleted), so the sweep has
real work: every entity derived anew, frontmatter backfilled, both indexes rebuilt. Reported: the whole
``full_sweep(ctx, apply=True)`` in notes/s, its phases (read+parse, plan, note writes,
entity index, recall index), a second (no-change) apply, and a dry run.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.machine_speed import speed_line
from bench.perf_recall import bench_env, open_ctx
from bench.synthetic_vault import build_recall_vault
from echo_core.ops.sweep import full_sweep


def hand_edit(vault: Path, every: int = 100) -> int:
    """Leave the vault as a person's edits would: the generator's one-way ``## Related``
    links dropped (else a first sweep writes a backlink into a third of the notes, which
    times fsync, not the sweep), every ``every``-th entity note stripped of its
    frontmatter, the entity index deleted. Returns how many notes were stripped."""
    stripped = 0
    for i, path in enumerate(sorted(p for p in vault.rglob("*.md") if p.name != "README.md")):
        text = path.read_text(encoding="utf-8")
        head, sep, _links = text.partition("## Related\n")
        new = head + sep
        if i % every == 0 and new.startswith("---\n") and "/_agent/" not in path.as_posix():
            new = new.split("---\n", 2)[2]
            stripped += 1
        if new != text:
            path.write_text(new, encoding="utf-8")
    (vault / "_agent/index/entities.json").unlink()
    return stripped


def run_size(size: int, work: Path) -> None:
    vault, state = work / "vault", work / "state"
    t0 = time.perf_counter()
    build_recall_vault(vault, work / "gen-state", size)
    stripped = hand_edit(vault)
    print(f"\n{size} notes (generated in {time.perf_counter() - t0:.1f} s; {stripped} "
          "stripped of frontmatter, entity index deleted)")
    env = bench_env(work)
    for label, apply in (("dry run", False), ("apply", True), ("apply again", True)):
        ctx = open_ctx(vault, state, env)
        result = full_sweep(ctx, apply=apply).data
        p = result.phases
        rate = result.notes / result.seconds
        print(f"  {label:12s} {result.seconds:7.2f} s  {rate:9,.0f} notes/s  changes "
              f"{result.changes:6d}  | read+parse {p.scan:.2f}  plan {p.plan:.2f}  writes "
              f"{p.write:.2f}  entities {p.entities:.2f}  recall {p.recall:.2f}")
        if apply:
            rest = result.seconds - p.recall
            print(f"  {'':12s} without the recall rebuild: {rest:.2f} s "
                  f"({result.notes / rest:,.0f} notes/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--keep", type=Path, default=None)
    opts = parser.parse_args()
    print(speed_line(), flush=True)
    base = opts.keep or Path(tempfile.mkdtemp(prefix="echo-sweep-"))
    try:
        for size in opts.sizes:
            work = base / f"sweep-{size}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            run_size(size, work)
    finally:
        if opts.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    print("\ntarget (issue 14): full sweep >= 10,000 notes/s")
    print(speed_line())


if __name__ == "__main__":
    main()
