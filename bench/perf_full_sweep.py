"""Full ``sweep --apply`` throughput on generated vaults (issue 14 target: >= 10k notes/s).

    python bench/perf_full_sweep.py [--sizes 10000 100000] [--keep DIR]
                                    [--postgres URL] [--strip-every N]

Per size: a vault from ``bench.synthetic_vault.build_recall_vault`` (entity notes,
session logs, journal notes, frontmatter, wikilinks), hand-edited (``hand_edit``: 1% of
the notes stripped of their frontmatter, the entity index deleted), so the sweep has
real work: every entity derived anew, frontmatter backfilled, both indexes rebuilt. Reported: the whole
``full_sweep(ctx, apply=True)`` in notes/s, its phases (read+parse, plan, note writes,
entity index, recall index), a second (no-change) apply, and a dry run.

``--postgres URL`` (a server's URL, e.g. ``tests/postgres_kit.py``'s): each generated
vault is imported into a new schema of it (dropped afterwards) and swept there, and
each apply also reports its vault-lock holds (how many, the longest, their sum: the
sweep lets the lock go between batches of note writes). ``--strip-every N``: strip every
N-th note's frontmatter (default 100; 1 gives a rewrite of nearly every note).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.machine_speed import speed_line
from bench.perf_recall import bench_env, open_ctx
from bench.postgres_kit import drop_schema, new_schema_name, with_schema
from bench.synthetic_vault import build_recall_vault
from echo_core.context import EchoContext
from echo_core.ops.sweep import full_sweep
from echo_core.ops.transfer_import import import_vault


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


def lock_holds(ctx: EchoContext) -> list[float]:
    """The seconds of each outermost hold of ``ctx``'s vault lock from now on."""
    storage, holds, depth = ctx.vault.storage, [], [0]
    real = storage.lock

    @contextlib.contextmanager
    def lock(timeout: float = 10.0):  # type: ignore[no-untyped-def]
        with real(timeout=timeout):
            depth[0] += 1
            began = time.perf_counter()
            try:
                yield
            finally:
                depth[0] -= 1
                if not depth[0]:
                    holds.append(time.perf_counter() - began)

    storage.lock = lock  # type: ignore[method-assign]
    return holds


def run_size(size: int, work: Path, postgres: str | None, every: int) -> None:
    vault, state = work / "vault", work / "state"
    t0 = time.perf_counter()
    build_recall_vault(vault, work / "gen-state", size)
    stripped = hand_edit(vault, every)
    print(f"\n{size} notes (generated in {time.perf_counter() - t0:.1f} s; {stripped} "
          "stripped of frontmatter, entity index deleted)")
    env = bench_env(work)
    target, schema = str(vault), ""
    if postgres:
        schema = new_schema_name()
        target = with_schema(postgres, schema)
        importer = open_ctx(target, work / "import-state", env)  # type: ignore[arg-type]
        assert import_vault(importer, str(vault)).ok
        print(f"  imported into PostgreSQL schema {schema}")
    try:
        for label, apply in (("dry run", False), ("apply", True), ("apply again", True)):
            ctx = open_ctx(target, state, env)  # type: ignore[arg-type]
            holds = lock_holds(ctx)
            result = full_sweep(ctx, apply=apply).data
            p = result.phases
            rate = result.notes / result.seconds
            print(f"  {label:12s} {result.seconds:7.2f} s  {rate:9,.0f} notes/s  changes "
                  f"{result.changes:6d}  | read+parse {p.scan:.2f}  plan {p.plan:.2f}  writes "
                  f"{p.write:.2f}  entities {p.entities:.2f}  recall {p.recall:.2f}")
            if apply:
                rest = result.seconds - p.recall
                print(f"  {'':12s} without the recall rebuild: {rest:.2f} s "
                      f"({result.notes / rest:,.0f} notes/s); vault lock held {len(holds)} "
                      f"times, longest {max(holds, default=0):.2f} s, in all {sum(holds):.2f} s")
    finally:
        if postgres:
            drop_schema(postgres, schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--postgres", default=None,
                        help="sweep on a PostgreSQL server (URL), a new schema per size")
    parser.add_argument("--strip-every", type=int, default=100)
    opts = parser.parse_args()
    print(speed_line(), flush=True)
    base = opts.keep or Path(tempfile.mkdtemp(prefix="echo-sweep-"))
    try:
        for size in opts.sizes:
            work = base / f"sweep-{size}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            run_size(size, work, opts.postgres, opts.strip_every)
    finally:
        if opts.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    print("\ntarget (issue 14): full sweep >= 10,000 notes/s")
    print(speed_line())


if __name__ == "__main__":
    main()
