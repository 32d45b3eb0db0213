"""Benchmark of the fast sweep and of live freshness at vault scale (issue 14).

Targets: ``sweep --fast`` over 100k notes <= 1 s unchanged and <= 3 s with 1% changed;
the freshness check adds <= 30 ms to a cold process at 100k unchanged notes.

    python bench/perf_fast_sweep.py [--notes 100000] [--runs 5] [--work DIR]

Builds (once per --work dir) a folder vault of ``--notes`` hand-written-looking notes in
200 folders, records the baseline with a first fast sweep, then measures, each figure the
median of ``--runs`` runs:

* ``fast_unchanged``: a fast sweep of the unchanged vault in a fresh context (the
  day's verification shard, 1/7 of the notes, is read and hashed);
* ``fast_1pct``: the same after 1% of the notes were edited by hand (a line appended);
* ``fresh_cold``: the bounded freshness check timed inside a cold process (a new
  interpreter that imports echo_core and opens the context, then times ``freshen``);
* ``cli_recall_on`` / ``cli_recall_off``: a cold ``echo-memory recall`` with the check on
  and off (``ECHO_FRESHNESS=off``), alternated, so their difference is what a user pays.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.machine_speed import speed_line  # noqa: E402
from echo_core.context import create_context  # noqa: E402
from echo_core.ops.fast_sweep import fast_sweep  # noqa: E402
from echo_core.ops.init import init_vault  # noqa: E402

FOLDERS = 200
WORDS = ["alpha", "beacon", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo",
         "juniper", "kelvin", "lumen", "mosaic", "nectar", "onyx", "prism", "quartz", "raven"]


def env_for(work: Path) -> dict[str, str]:
    """A hermetic environment: state and home in ``work``, time pinned."""
    return {**os.environ, "HOME": str(work / "home"), "ECHO_TODAY": "2026-03-04",
            "ECHO_VAULT": str(work / "vault"), "ECHO_STATE_DIR": str(work / "state"),
            "ECHO_PLUGIN_DISTS": "echo-memory"}


def note_path(n: int) -> str:
    """Where note ``n`` lives: kind folders and a few sub-folders, as a vault grows."""
    kinds = ["resources/concepts", "resources/people", "resources/references", "projects/active"]
    return f"{kinds[n % 4]}/f{(n // 4) % (FOLDERS // 4):03d}/note-{n:06d}.md"


def note_text(n: int) -> str:
    """A plausible hand-written note; every other one without frontmatter."""
    words = " ".join(WORDS[(n * k) % len(WORDS)] for k in range(1, 40))
    head = f"---\ntags: [bench]\naliases: [N{n}]\n---\n" if n % 2 else ""
    return f"{head}# Note {n}\n\n{words} token{n}\n\nSee [[note-{(n * 7) % 1000:06d}]].\n"


def build(work: Path, notes: int) -> None:
    """The vault, once: files written directly (a person's vault), then the baseline."""
    vault = work / "vault"
    if (work / "built").exists() and (work / "built").read_text() == str(notes):
        return
    vault.mkdir(parents=True, exist_ok=True)
    env = env_for(work)
    init_vault(create_context(env=env))
    start = time.perf_counter()
    for n in range(notes):
        path = vault / note_path(n)
        if n < FOLDERS:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(n), "utf-8")
    print(f"wrote {notes} notes in {time.perf_counter() - start:.1f} s", flush=True)
    start = time.perf_counter()
    done = fast_sweep(create_context(env=env))
    print(f"baseline (first fast sweep, both indexes rebuilt): "
          f"{time.perf_counter() - start:.1f} s — {done.message}", flush=True)
    (work / "built").write_text(str(notes))


def timed_sweep(work: Path) -> tuple[float, str]:
    ctx = create_context(env=env_for(work))
    start = time.perf_counter()
    done = fast_sweep(ctx)
    return time.perf_counter() - start, done.message


def edit_some(work: Path, notes: int, fraction: float, round_: int) -> int:
    step = max(1, int(1 / fraction))
    count = 0
    for n in range(round_ % step, notes, step):
        with (work / "vault" / note_path(n)).open("a", encoding="utf-8") as handle:
            handle.write(f"edited by hand, round {round_}\n")
        count += 1
    return count


COLD_FRESHEN = """
import sys, time
sys.path.insert(0, {repo!r})
from echo_core.context import create_context
from echo_core.ops.freshness import freshen
ctx = create_context()
ctx.vault
start = time.perf_counter()
freshen(ctx)
print(time.perf_counter() - start)
"""


def cold_freshen(work: Path) -> float:
    out = subprocess.run([sys.executable, "-c", COLD_FRESHEN.format(repo=str(REPO))],
                         env=env_for(work), capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def cold_recall(work: Path, freshness: bool) -> float:
    env = env_for(work)
    if not freshness:
        env["ECHO_FRESHNESS"] = "off"
    start = time.perf_counter()
    subprocess.run([str(Path(sys.executable).parent / "echo-memory"), "recall", "cobalt fjord",
                    "--limit", "3"], env=env, capture_output=True, check=True, cwd=REPO)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", type=Path, default=None)
    opts = parser.parse_args()
    print(speed_line(), flush=True)
    work = opts.work or Path(tempfile.mkdtemp(prefix="echo-fast-sweep-"))
    build(work, opts.notes)
    results: dict[str, float] = {}
    timed_sweep(work)  # settle: the page cache holds the tree, as it does on a used machine
    results["fast_unchanged_s"] = statistics.median(timed_sweep(work)[0] for _ in range(opts.runs))
    changed = []
    for round_ in range(opts.runs):
        count = edit_some(work, opts.notes, 0.01, round_ + 1)
        seconds, message = timed_sweep(work)
        changed.append(seconds)
        print(f"  1% round {round_ + 1}: {count} edited, {seconds:.2f} s — {message}", flush=True)
    results["fast_1pct_s"] = statistics.median(changed)
    results["fresh_cold_ms"] = statistics.median(cold_freshen(work) for _ in range(opts.runs * 3)) * 1000
    on, off = [], []
    for _ in range(opts.runs * 7):
        on.append(cold_recall(work, True))
        off.append(cold_recall(work, False))
    results["cli_recall_on_ms"] = statistics.median(on) * 1000
    results["cli_recall_off_ms"] = statistics.median(off) * 1000
    print(json.dumps({"notes": opts.notes, **{k: round(v, 3) for k, v in results.items()}},
                     indent=1))


if __name__ == "__main__":
    main()
