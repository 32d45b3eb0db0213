"""Cold-start time of the CLI: median of N runs of a command in fresh processes, next to
the interpreter's own start (``python -c pass``) measured in the same runs.

    python bench/perf_cli_start.py                 # echo-memory --help, 15 runs
    python bench/perf_cli_start.py --runs 20 -- plugins --json
    python bench/perf_cli_start.py --scan          # also with ECHO_PLUGIN_CACHE=off
    python bench/perf_cli_start.py --imports       # what the start-up imports, by module

Goal (issue 15): ``echo-memory --help`` median <= 50 ms (issue 2 had 150 ms). The runs of
each variant are interleaved, so a busy machine slows them alike; compare before/after
in the same minute. The first runs (not counted) write the entry-point cache
(``echo_core.entry_point_cache``) that every later start reads.

``--imports`` sums ``python -X importtime`` self times per module (those ``python -c
pass`` imports left out), with ``importlib.import_module`` routed through ``__import__``
so the plugins loaded from entry points are counted too. Times under ``-X importtime``
are inflated; use it to see where the time goes, the medians to see how much.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

#: Runs ``main`` with the arguments given, importing through ``__import__`` (see above).
_IMPORT_PROBE = """
import importlib, sys
def _import(name, package=None):
    __import__(name)
    return sys.modules[name]
importlib.import_module = _import
from plugins.transport_cli.app import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
"""
_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+\d+ \| \s*(\S+)")


def time_variants(variants: dict[str, tuple[list[str], dict[str, str]]],
                  runs: int) -> dict[str, list[float]]:
    """Wall-clock milliseconds of ``runs`` runs of each variant (argv, env), interleaved
    (output discarded)."""
    times: dict[str, list[float]] = {label: [] for label in variants}
    for _ in range(runs):
        for label, (argv, env) in variants.items():
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=env, check=False)
            times[label].append((time.perf_counter() - start) * 1000)
    return times


def import_self_times(args: list[str]) -> list[tuple[str, float]]:
    """The modules by ``-X importtime`` self time (ms, largest first) of a start-up
    running ``args``, modules that ``python -c pass`` imports left out."""
    def imported(argv: list[str]) -> list[tuple[str, int]]:
        done = subprocess.run([sys.executable, "-X", "importtime", *argv],
                              capture_output=True, text=True, check=False)
        return [(m.group(2), int(m.group(1)))
                for m in map(_IMPORT_LINE.match, done.stderr.splitlines()) if m]

    baseline = {name for name, _ in imported(["-c", "pass"])}
    imported(["-c", _IMPORT_PROBE, *args])  # a first start may write the cache
    totals: collections.Counter[str] = collections.Counter()
    for name, micros in imported(["-c", _IMPORT_PROBE, *args]):
        if name not in baseline:
            key = name if name.startswith(("echo_core", "plugins")) else name.split(".")[0]
            totals[key] += micros
    return [(name, micros / 1000) for name, micros in totals.most_common()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--scan", action="store_true",
                        help="also time it with ECHO_PLUGIN_CACHE=off (every start scans)")
    parser.add_argument("--imports", action="store_true",
                        help="print the modules the start-up imports, by self time")
    parser.add_argument("args", nargs="*", default=["--help"])
    opts = parser.parse_args()
    exe = shutil.which("echo-memory") or sys.exit("echo-memory is not on PATH; pip install . first")
    env = dict(os.environ)
    shown = f"echo-memory {' '.join(opts.args)}"
    variants = {"python -c pass": ([sys.executable, "-c", "pass"], env),
                shown: ([exe, *opts.args], env)}
    if opts.scan:
        variants[f"{shown} (ECHO_PLUGIN_CACHE=off)"] = (
            [exe, *opts.args], {**env, "ECHO_PLUGIN_CACHE": "off"})
    time_variants(variants, 2)  # warm the OS file cache and the entry-point cache
    for label, times in time_variants(variants, opts.runs).items():
        print(f"{label}: median {statistics.median(times):.1f} ms "
              f"(min {min(times):.1f}, max {max(times):.1f}, runs {opts.runs})")
    if opts.imports:
        print(f"\nimported by {shown} beyond `python -c pass` (-X importtime self, ms):")
        rows = import_self_times(opts.args)
        print(f"{sum(ms for _, ms in rows):7.2f}  (total of {len(rows)})")
        for name, ms in rows[:40]:
            print(f"{ms:7.2f}  {name}")


if __name__ == "__main__":
    main()
