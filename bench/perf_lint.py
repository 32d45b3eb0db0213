"""How long ``lint`` takes on a large synthetic vault (target: <= 10 s at 100k notes).

    python bench/perf_lint.py [--notes 100000] [--runs 3] [--keep DIR [--reuse]]
                              [--profile]

One vault from ``bench.synthetic_vault.build_recall_vault`` (Zipfian text, wikilinks,
frontmatter; 70% entity notes with their index entries, 20% session logs, 10% journal
notes). Measured:

* in-process: ``lint(ctx)`` in a fresh interpreter each run (one lint per process, as
  the CLI runs it: a second lint in the same process would pay for the first one's
  memory), every check and the quality scores, best and median of ``--runs`` (the file
  reads included; the OS page cache is warm after the first run);
* cold CLI: ``echo-memory lint --json --vault V --state-dir S`` in a new process
  (start-up, reads, checks and the JSON of every finding and score), median of runs;
* the split of one in-process run: reading + parsing the vault, then each check.

``--profile`` cProfiles one in-process run (top 25 by cumulative time).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.machine_speed import speed_line
from bench.synthetic_vault import build_recall_vault
from echo_core.bulk_work import collector_paused
from echo_core.context import EchoContext, create_context
from echo_core.ops.lint.quality import quality_scores
from echo_core.ops.lint.registry import CHECKS
from echo_core.ops.lint.run import lint
from echo_core.ops.lint.snapshot import read_snapshot

TODAY = "2026-03-01"
TARGET_S = 10.0


def _env(state: Path) -> dict[str, str]:
    return {"ECHO_TODAY": TODAY, "HOME": str(state / "home"),
            "ECHO_CONFIG": str(state / "none.toml")}


def _ctx(vault: Path, state: Path) -> EchoContext:
    return create_context(vault=str(vault), state_dir=str(state), env=_env(state))


@collector_paused()  # as lint itself runs
def _split(vault: Path, state: Path) -> list[tuple[str, float]]:
    ctx = _ctx(vault, state)
    start = time.perf_counter()
    snap = read_snapshot(ctx)
    parts = [("read + parse", time.perf_counter() - start)]
    for check in CHECKS:
        start = time.perf_counter()
        count = sum(1 for _ in check.run(snap))
        parts.append((f"{check.name} ({count})", time.perf_counter() - start))
    start = time.perf_counter()
    quality_scores(snap)
    parts.append(("quality scores", time.perf_counter() - start))
    return parts


def _cli(vault: Path, state: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    env.update(_env(state))
    start = time.perf_counter()
    exe = shutil.which("echo-memory") or str(Path(sys.executable).parent / "echo-memory")
    subprocess.run([exe, "lint", "--json",
                    "--vault", str(vault), "--state-dir", str(state)],
                   env=env, stdout=subprocess.DEVNULL, check=False, cwd=ROOT)
    return time.perf_counter() - start


def _one_in_fresh_process(vault: Path, state: Path) -> tuple[float, int, int]:
    """(seconds of ``lint(ctx)``, notes, findings), measured in a new interpreter."""
    out = subprocess.run([sys.executable, __file__, "--one", str(vault), str(state)],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    seconds, notes, found = out.split()
    return float(seconds), int(notes), int(found)


def _one(vault: Path, state: Path) -> None:
    ctx = _ctx(vault, state)
    start = time.perf_counter()
    env = lint(ctx)
    print(time.perf_counter() - start, env.data.notes, len(env.data.findings))


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        _one(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep the vault under this folder")
    parser.add_argument("--reuse", action="store_true", help="measure a kept vault again")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    print(speed_line())
    base = args.keep or Path(tempfile.mkdtemp(prefix="perf-lint-"))
    root = base / f"lint-{args.notes}"
    vault, state = root / "vault", root / "state"
    try:
        if not (args.reuse and vault.exists()):
            shutil.rmtree(root, ignore_errors=True)
            start = time.perf_counter()
            build_recall_vault(vault, state, args.notes)
            print(f"generated {args.notes} notes in {time.perf_counter() - start:.1f} s")
        runs = [_one_in_fresh_process(vault, state) for _ in range(args.runs)]
        times = [seconds for seconds, _notes, _found in runs]
        _seconds, notes, found = runs[0]
        print(f"lint in-process: best {min(times):.2f} s, median "
              f"{statistics.median(times):.2f} s over {args.runs} runs "
              f"({notes} notes, {found} findings; target <= {TARGET_S:.0f} s)")
        cli = [_cli(vault, state) for _ in range(max(1, args.runs))]
        print(f"lint CLI cold (--json): median {statistics.median(cli):.2f} s, "
              f"best {min(cli):.2f} s")
        for name, seconds in _split(vault, state):
            print(f"  {name:<34} {seconds:6.2f} s")
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            lint(_ctx(vault, state))
            profile.disable()
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(25)
            print(out.getvalue())
        print(speed_line())
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
