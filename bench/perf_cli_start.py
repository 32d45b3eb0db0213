"""Cold-start time of the CLI: median of N runs of a command in fresh processes.

    python bench/perf_cli_start.py                 # echo-memory --help, 10 runs
    python bench/perf_cli_start.py --runs 20 -- plugins --json

Goal (issue 2): ``echo-memory --help`` median <= 150 ms.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def time_command(argv: list[str], runs: int) -> list[float]:
    """Wall-clock milliseconds of each run of ``argv`` (output discarded)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("args", nargs="*", default=["--help"])
    opts = parser.parse_args()
    exe = shutil.which("echo-memory") or sys.exit("echo-memory is not on PATH; pip install . first")
    time_command([exe, *opts.args], 2)  # warm the OS file cache
    times = time_command([exe, *opts.args], opts.runs)
    print(f"echo-memory {' '.join(opts.args)}: median {statistics.median(times):.1f} ms "
          f"(min {min(times):.1f}, max {max(times):.1f}, runs {opts.runs})")


if __name__ == "__main__":
    main()
