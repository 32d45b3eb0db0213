"""Cold-start time of the CLI: median of N runs of a command in fresh processes, next to
the interpreter's own start (``python -c pass``) measured in the same runs.

    python bench/perf_cli_start.py                 # echo-memory --help, 15 runs
    python bench/perf_cli_start.py --runs 20 -- plugins --json
    python bench/perf_cli_start.py --scan          # also with ECHO_PLUGIN_CACHE=off
    python bench/perf_cli_start.py --imports       # what the start-up imports, by module
    python bench/perf_cli_start.py --stdin event.json -- hook UserPromptSubmit

Goal (issue 15): ``echo-memory --help`` median <= 50 ms (issue 2 had 150 ms). The runs of
each variant are interleaved, so a busy machine slows them alike; compare before/after
in the same minute; the CPU time (user + system, from ``wait4``) next to the wall time
suffers less from a busy machine. The first runs (not counted) write the entry-point cache
(``echo_core.entry_point_cache``) that every later start reads. ``--stdin FILE`` feeds each
run that file (a Claude Code hook's event JSON).

``--imports`` sums ``python -X importtime`` self times per module (those ``python -c
pass`` imports left out), with ``importlib.import_module`` routed through ``__import__``
so the plugins loaded from entry points are counted too, and ``sys.path[0]`` set to the
console script's folder as when ``echo-memory`` runs (not the working directory, which a
hook changes to its event's ``cwd``: the entry-point cache key holds each path's stamp).
Times under ``-X importtime`` are inflated; use it to see where the time goes, the
medians to see how much.
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
sys.path[0] = sys.argv.pop(1)
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


def time_variants(variants: dict[str, tuple[list[str], dict[str, str]]], runs: int,
                  stdin: bytes = b"") -> dict[str, tuple[list[float], list[float]]]:
    """Wall-clock and CPU (user + system) milliseconds of ``runs`` runs of each variant
    (argv, env), interleaved, each fed ``stdin`` (output discarded)."""
    times: dict[str, tuple[list[float], list[float]]] = {
        label: ([], []) for label in variants}
    for _ in range(runs):
        for label, (argv, env) in variants.items():
            start = time.perf_counter()
            child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, env=env)
            assert child.stdin is not None
            try:
                child.stdin.write(stdin)
                child.stdin.close()
            except BrokenPipeError:  # a command that never reads its input
                pass
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            wall, cpu = times[label]
            wall.append((time.perf_counter() - start) * 1000)
            cpu.append((usage.ru_utime + usage.ru_stime) * 1000)
    return times


def import_self_times(args: list[str], script_dir: str,
                      stdin: bytes = b"") -> list[tuple[str, float]]:
    """The modules by ``-X importtime`` self time (ms, largest first) of a start-up
    running ``args`` (fed ``stdin``), modules that ``python -c pass`` imports left out."""
    def imported(argv: list[str]) -> list[tuple[str, int]]:
        done = subprocess.run([sys.executable, "-X", "importtime", *argv], input=stdin,
                              capture_output=True, check=False)
        lines = done.stderr.decode("utf-8", "replace").splitlines()
        return [(m.group(2), int(m.group(1))) for m in map(_IMPORT_LINE.match, lines) if m]

    baseline = {name for name, _ in imported(["-c", "pass"])}
    probe = ["-c", _IMPORT_PROBE, script_dir, *args]
    imported(probe)  # a first start may write the cache
    totals: collections.Counter[str] = collections.Counter()
    for name, micros in imported(probe):
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
    parser.add_argument("--stdin", type=argparse.FileType("rb"),
                        help="feed every run this file (a hook's event JSON)")
    parser.add_argument("args", nargs="*", default=["--help"])
    opts = parser.parse_args()
    stdin = opts.stdin.read() if opts.stdin else b""
    exe = shutil.which("echo-memory") or sys.exit("echo-memory is not on PATH; pip install . first")
    env = dict(os.environ)
    shown = f"echo-memory {' '.join(opts.args)}"
    variants = {"python -c pass": ([sys.executable, "-c", "pass"], env),
                shown: ([exe, *opts.args], env)}
    if opts.scan:
        variants[f"{shown} (ECHO_PLUGIN_CACHE=off)"] = (
            [exe, *opts.args], {**env, "ECHO_PLUGIN_CACHE": "off"})
    time_variants(variants, 2, stdin)  # warm the OS file cache and the entry-point cache
    for label, (wall, cpu) in time_variants(variants, opts.runs, stdin).items():
        print(f"{label}: median {statistics.median(wall):.1f} ms "
              f"(min {min(wall):.1f}, max {max(wall):.1f}, runs {opts.runs}); "
              f"CPU median {statistics.median(cpu):.1f} ms")
    if opts.imports:
        print(f"\nimported by {shown} beyond `python -c pass` (-X importtime self, ms):")
        rows = import_self_times(opts.args, os.path.dirname(exe), stdin)
        print(f"{sum(ms for _, ms in rows):7.2f}  (total of {len(rows)})")
        for name, ms in rows[:40]:
            print(f"{ms:7.2f}  {name}")


if __name__ == "__main__":
    main()
