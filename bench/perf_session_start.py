"""Session-start hook, end to end from cold processes, on a synthetic vault.

    python bench/perf_session_start.py [--notes 10000] [--runs 15]
    python bench/perf_session_start.py --vault V --state-base S [--runs 15]

Builds a vault (``bench.synthetic_vault.build_recall_vault``) with a scope, observations
and an inbox, or takes an existing one (``--vault``, ``--state-base``: e.g. a copy of
``perf_cold.py``'s 100k-note vault after one ``sweep --fast``), then runs, ``--runs``
times in fresh processes and interleaved: ``python -c pass`` (the interpreter's floor),
``echo-memory hook SessionStart`` with ``source: resume`` (quiet: the hook's fixed cost)
and with ``source: startup`` (the brief). It reports each one's median wall time, the
size of the injected context, and how long the full freshness pass the session start
leaves for after its answer takes (``echo_core.ops.session_pass``, in a detached
process): each run waits for that pass to end (``wait_for_session_pass``) before the next
command, so no measurement shares the CPU with it. Goal (issue 15): SessionStart median
<= 100 ms at 100k notes.
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.synthetic_vault import build_recall_vault  # noqa: E402
from echo_core.ops.session_pass import LOCK_FILE  # noqa: E402


def seed_session_state(root: Path) -> None:
    """Give the digest real content: preferences with observations, a scope, an inbox."""
    prefs = root / "_agent/memory/semantic/operator-preferences.md"
    text = prefs.read_text(encoding="utf-8")
    observations = "".join(f"- 2026-02-{d:02d}: observation number {d}\n" for d in range(1, 15))
    prefs.write_text(text.replace("## Observations\n", "## Observations\n" + observations))
    inbox = root / "inbox/captures/inbox.md"
    inbox.write_text(inbox.read_text() + "".join(f"- 2026-02-{d:02d}: item {d}\n" for d in range(1, 21)))


def wait_for_session_pass(state_base: Path, settle: float = 0.3) -> float:
    """Wait until no session pass holds a lock under ``state_base`` (after ``settle``
    seconds for a just-started one to take it); the seconds waited in all."""
    start = time.perf_counter()
    time.sleep(settle)
    for lock in glob.glob(str(state_base / "vaults" / "*" / LOCK_FILE)):
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        finally:
            os.close(fd)
    return time.perf_counter() - start


def _event(cwd: str, source: str) -> bytes:
    return json.dumps({"session_id": "bench-session", "transcript_path": f"{cwd}/t.jsonl",
                       "cwd": cwd, "hook_event_name": "SessionStart", "source": source,
                       "permission_mode": "default"}).encode()


def measure(exe: str, env: dict[str, str], state_base: Path, runs: int, cwd: str) -> None:
    """Run the three commands ``runs`` times interleaved (after one warm-up) and print."""
    commands = {"python -c pass": ([sys.executable, "-c", "pass"], b""),
                "hook SessionStart (resume, quiet)": ([exe, "hook", "SessionStart"],
                                                      _event(cwd, "resume")),
                "hook SessionStart (startup)": ([exe, "hook", "SessionStart"],
                                                _event(cwd, "startup"))}
    times: dict[str, list[float]] = {name: [] for name in commands}
    passes: list[float] = []
    size = 0
    for run in range(runs + 1):
        for name, (argv, stdin) in commands.items():
            start = time.perf_counter()
            out = subprocess.run(argv, input=stdin, env=env, capture_output=True, check=False)
            took = (time.perf_counter() - start) * 1000
            if name.endswith("(startup)"):
                payload = json.loads(out.stdout) if out.stdout.strip() else {}
                size = len(payload.get("hookSpecificOutput", {}).get("additionalContext", ""))
                waited = wait_for_session_pass(state_base)
                if run:
                    passes.append(waited * 1000)
            if run:  # the first run warms the OS file cache
                times[name].append(took)
    for name, values in times.items():
        print(f"{name:36s} median {statistics.median(values):7.1f} ms "
              f"(min {min(values):.1f}, max {max(values):.1f})")
    print(f"{'full pass after the answer (ends by)':36s} median {statistics.median(passes):7.1f} ms "
          f"after the hook exits; context {size} chars; {runs} cold runs each")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--vault", type=Path, help="an existing vault (with --state-base)")
    parser.add_argument("--state-base", type=Path, help="its ECHO_STATE_DIR")
    opts = parser.parse_args()
    exe = shutil.which("echo-memory") or sys.exit("echo-memory is not on PATH; pip install . first")
    base_env = {**os.environ, "ECHO_TODAY": "2026-03-01", "ECHO_NOW": "2026-03-01T09:30:00"}
    with tempfile.TemporaryDirectory() as tmp:
        if opts.vault is not None:
            if opts.state_base is None:
                sys.exit("--vault needs --state-base (the vault's ECHO_STATE_DIR)")
            root, state = opts.vault, opts.state_base
        else:
            root, state = Path(tmp) / "vault", Path(tmp) / "state"
            build_recall_vault(root, state, opts.notes)
            seed_session_state(root)
        env = {**base_env, "ECHO_VAULT": str(root), "ECHO_STATE_DIR": str(state)}
        print(f"vault {root}")
        measure(exe, env, state, opts.runs, tmp)


if __name__ == "__main__":
    main()
