"""Cold processes on a large vault: every hook and CLI write as a user's agent meets them.

    python bench/perf_cold.py [--sizes 100000] [--runs 10] [--keep DIR]
                              [--installed VENV] [--save now.json] [--compare before.json]

Issue 15's table, measured in one run: per vault size (``bench.synthetic_vault``'s recall
vault, built once per ``--keep`` folder and reused), each command below runs ``--runs``
times in a new process after one warm-up run (which also builds whatever index a first
run builds), and the median wall time and the largest peak RSS are reported:

* ``python -c pass``: the interpreter's floor;
* ``echo-memory --help``;
* ``echo-memory recall --json <query>`` (a different query each run);
* ``echo-memory hook UserPromptSubmit`` and ``hook SessionStart`` with Claude Code's stdin
  (each SessionStart's full freshness pass, which runs after its answer in a detached
  process, is waited for, untimed, before the next command runs);
* ``echo-memory capture`` of a new title (create) and of one title again (update).

A kept vault is the same at the start of every run: the day's note and the note the
update row updates are written anew (``TYPICAL_DAY``: a dozen captures logged;
``UPDATED_TEXT``: five facts), so neither grows with the runs made before.

The commands run as an installed package does, with bytecode (``PYTHONDONTWRITEBYTECODE``
is dropped from their environment, so the warm-up run writes what a source checkout
lacks). By default they are the ``echo-memory`` on PATH and this interpreter: in a
development venv that is the editable install, whose import finder (a ``.pth`` file that
imports ``pathlib``, ``urllib`` and ``importlib.util`` into every process) costs every row
about 10 ms that a user's install does not pay. ``--installed VENV`` measures what the
README's first command installs instead: this checkout installed non-editable into the
venv ``VENV`` (created on first use with the dependencies from the index; this checkout
reinstalled, without dependencies, on every run), its ``python`` the floor.

``--save`` writes the figures as JSON; ``--compare`` reads such a file and prints it as a
"before" column beside this run, so a change is checked against the run before it. Each
table also prints the machine's speed (``bench.machine_speed``): on this shared machine
timings vary up to 2x, so compare runs made at a similar speed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.machine_speed import speed_line  # noqa: E402
from bench.perf_session_start import wait_for_session_pass  # noqa: E402
from bench.synthetic_vault import build_recall_vault, draw_queries, recall_sampler  # noqa: E402

#: (row, target) in the order printed; the targets are issue 15's.
ROWS = [("python -c pass", ""), ("echo-memory --help", "<= 50 ms"),
        ("recall --json", "<= 100 ms"), ("hook UserPromptSubmit", "<= 100 ms"),
        ("hook SessionStart", "<= 100 ms"), ("capture (create)", "<= 150 ms, <= 80 MB"),
        ("capture (update)", "<= 150 ms, <= 80 MB")]


#: GNU time, when installed: it reports a child's own peak RSS (``wait4`` of a child this
#: interpreter spawns counts this interpreter's memory too, shared until the exec).
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run_cold(argv: list[str], env: dict[str, str], stdin: bytes = b"") -> float:
    """Wall milliseconds of one run of ``argv`` in a new process (stdin given, stdout
    discarded); exits with the command's error when it fails."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, input=stdin, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    wall = (time.perf_counter() - start) * 1000
    if done.returncode not in (0, 1):  # 1: recall found nothing
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: "
                         f"{done.stderr.decode()[-600:]}")
    return wall


def peak_rss_mb(argv: list[str], env: dict[str, str], stdin: bytes = b"") -> float | None:
    """The peak RSS of one more run of ``argv`` (MB), None without GNU time."""
    if GNU_TIME is None:
        return None
    with tempfile.NamedTemporaryFile("r") as out:
        run_cold([GNU_TIME, "-f", "%M", "-o", out.name, *argv], env, stdin)
        return int(out.read().split()[-1]) / 1024


def measure(label: str, make: Callable[[int], tuple[list[str], bytes]], env: dict[str, str],
            runs: int, after: Callable[[], object] = lambda: None) -> dict[str, float | None]:
    """Median wall ms of ``runs`` cold runs (after one warm-up run), and the peak RSS of
    one run more. ``after()`` runs after each run, untimed (SessionStart: wait for the
    full freshness pass it leaves running after its answer, so the next run does not
    share the CPU with it)."""
    warm_argv, warm_stdin = make(-1)
    run_cold(warm_argv, env, warm_stdin)
    after()
    walls = []
    for argv, stdin in map(make, range(runs)):
        walls.append(run_cold(argv, env, stdin))
        after()
    last_argv, last_stdin = make(runs)
    rss = peak_rss_mb(last_argv, env, last_stdin)
    after()
    shown = f"{rss:6.1f} MB" if rss is not None else "(no GNU time)"
    print(f"  {label:24s} median {statistics.median(walls):7.1f} ms  (min {min(walls):.1f}, "
          f"max {max(walls):.1f})  peak RSS {shown}", flush=True)
    return {"ms": round(statistics.median(walls), 1),
            "rss_mb": None if rss is None else round(rss, 1)}


def hook_event(name: str, work: Path, **fields: str) -> bytes:
    return json.dumps({"session_id": "bench-cold", "transcript_path": str(work / "t.jsonl"),
                       "cwd": str(work), "hook_event_name": name,
                       "permission_mode": "default", **fields}).encode()


def installed_venv(venv: Path) -> tuple[str, str]:
    """``(python, echo-memory)`` of ``venv`` holding this checkout installed non-editable:
    the venv and the dependencies are made once, the checkout reinstalled every time."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", str(ROOT)], check=True)
    began = time.perf_counter()
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                    str(ROOT)], check=True, env={**os.environ, "PIP_NO_WARN_SCRIPT_LOCATION": "1"})
    print(f"installed this checkout into {venv} in {time.perf_counter() - began:.1f} s",
          flush=True)
    # A site folder changed less than 2 s ago is not cached by the entry-point cache
    # (entry_point_cache.RACY_NS): wait it out, so no measured run pays a scan.
    time.sleep(2.5)
    return str(python), str(venv / "bin" / "echo-memory")


def on_path() -> tuple[str, str]:
    """``(python, echo-memory)``: this interpreter and the ``echo-memory`` on PATH."""
    exe = shutil.which("echo-memory") or sys.exit("echo-memory is not on PATH: pip install -e .")
    return sys.executable, exe


#: The day's note every run starts from (the SessionStart brief shows its agent log): a
#: working day's dozen captures and a session, not the thousands of lines that the
#: captures of every earlier run of this bench would otherwise pile up in it.
DAILY_NOTE = "journal/daily/2026-03-01.md"
TYPICAL_DAY = ("---\ntype: daily\ncreated: \"2026-03-01\"\ntags: [daily]\n---\n# 2026-03-01\n\n"
               "## Agent Log\n"
               + "".join(f"- 2026-03-01: {'created' if n % 3 else 'updated'} concept "
                         f"[[bench-day-note-{n}]]\n" for n in range(12))
               + "- 2026-03-01: session [[_agent/sessions/2026-03-01-0900]]\n")
#: The note the update row updates, as every run starts from it (five facts so far).
UPDATED_NOTE = "resources/concepts/cold-bench-updated.md"
UPDATED_TEXT = ("---\ntype: concept\nstatus: active\ncreated: 2026-03-01\nupdated: 2026-03-01\n"
                "tags: [concept]\n---\n# Cold Bench Updated\n\nFact number 0.\n\n## Notes\n"
                + "".join(f"- 2026-03-01: Fact number {n}.\n" for n in range(1, 6)))


def measure_size(size: int, work: Path, runs: int,
                 programs: tuple[str, str]) -> dict[str, dict[str, float | None]]:
    python, exe = programs
    vault, state = work / "vault", work / "state"
    marker = work / "built"
    if not marker.exists():
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        began = time.perf_counter()
        build_recall_vault(vault, work / "gen-state", size)
        marker.write_text(str(size))
        print(f"  built {size} notes in {time.perf_counter() - began:.1f} s", flush=True)
    env = {**os.environ, "ECHO_VAULT": str(vault), "ECHO_STATE_DIR": str(state),
           "ECHO_TODAY": "2026-03-01", "ECHO_NOW": "2026-03-01T09:30:00",
           "HOME": str(work / "home"), "ECHO_CONFIG": str(work / "none.toml")}
    # as installed: bytecode written (the warm-up run writes what an editable checkout
    # lacks; with PYTHONDONTWRITEBYTECODE every run would compile the sources again)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    queries = draw_queries(recall_sampler(), runs + 2)
    # the same day for every run of this bench: the captures of earlier runs logged to it
    for path, text in ((DAILY_NOTE, TYPICAL_DAY), (UPDATED_NOTE, UPDATED_TEXT)):
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    # the first cold run builds the indexes and the manifest: not what a user meets each time
    began = time.perf_counter()
    subprocess.run([exe, "sweep", "--fast"], env=env, capture_output=True, check=True)
    print(f"  setup: first fast sweep {time.perf_counter() - began:.1f} s", flush=True)
    stamp = f"{time.time_ns() % 10**9}"
    commands: dict[str, Callable[[int], tuple[list[str], bytes]]] = {
        "python -c pass": lambda i: ([python, "-c", "pass"], b""),
        "echo-memory --help": lambda i: ([exe, "--help"], b""),
        "recall --json": lambda i: ([exe, "recall", "--json", queries[i + 1]], b""),
        "hook UserPromptSubmit": lambda i: ([exe, "hook", "UserPromptSubmit"], hook_event(
            "UserPromptSubmit", work, prompt=f"what do we know about {queries[i + 1]}?")),
        "hook SessionStart": lambda i: ([exe, "hook", "SessionStart"], hook_event(
            "SessionStart", work, source="startup")),
        "capture (create)": lambda i: ([exe, "capture", f"Cold Bench {stamp} {i + 1}",
                                        "--kind", "concept", "--body", "A new concept."], b""),
        "capture (update)": lambda i: ([exe, "capture", "Cold Bench Updated", "--kind",
                                        "concept", "--body", f"Fact number {stamp}-{i + 1}."],
                                       b""),
    }
    waits: dict[str, Callable[[], object]] = {
        "hook SessionStart": lambda: wait_for_session_pass(state)}
    return {label: measure(label, make, env, runs, waits.get(label, lambda: None))
            for label, make in commands.items()}


def print_table(size: int, now: dict[str, dict[str, float | None]],
                before: dict[str, dict[str, float | None]] | None) -> None:
    print(f"\n| command (cold process, {size} notes) | target | "
          + ("before | " if before else "") + "now | peak RSS |")
    print("|---|---|" + ("---|" if before else "") + "---|---|")
    for label, target in ROWS:
        row = now[label]
        was = before.get(label) if before else None
        cell = "" if not before else (f"{was['ms']:.0f} ms | " if was else "- | ")
        rss = "-" if row["rss_mb"] is None else f"{row['rss_mb']:.0f} MB"
        print(f"| {label} | {target} | {cell}{row['ms']:.0f} ms | {rss} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100000])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--keep", type=Path, default=None,
                        help="build the vaults here and reuse them on the next run")
    parser.add_argument("--save", type=Path, default=None)
    parser.add_argument("--compare", type=Path, default=None)
    parser.add_argument("--installed", type=Path, default=None, metavar="VENV",
                        help="measure this checkout installed non-editable in the venv VENV "
                        "(made on first use), as a user's install runs")
    opts = parser.parse_args()
    before = json.loads(opts.compare.read_text()) if opts.compare else {}
    programs = installed_venv(opts.installed.resolve()) if opts.installed else on_path()
    print(f"measuring {programs[1]}", flush=True)
    print(speed_line(), flush=True)
    base = opts.keep or Path(tempfile.mkdtemp(prefix="echo-cold-"))
    results: dict[str, dict[str, dict[str, float | None]]] = {}
    try:
        for size in opts.sizes:
            print(f"\n{size} notes", flush=True)
            results[str(size)] = measure_size(size, base / f"cold-{size}", opts.runs, programs)
    finally:
        if opts.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    for size in opts.sizes:
        print_table(size, results[str(size)], before.get(str(size)))
    print("\n" + speed_line())
    if opts.save:
        opts.save.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
