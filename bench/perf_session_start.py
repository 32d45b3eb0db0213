"""Session-start hook, end to end from cold processes, on a synthetic vault.

    python bench/perf_session_start.py [--notes 10000] [--runs 10]

Builds a vault (``bench.synthetic_vault.build_recall_vault``) with a scope, observations
and an inbox, then runs ``echo-memory hook SessionStart`` with a realistic stdin event
``--runs`` times in fresh processes and reports the median wall time and the size of the
injected context. Goal (issue 5): median <= 150 ms at 10k notes.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.synthetic_vault import build_recall_vault  # noqa: E402


def seed_session_state(root: Path) -> None:
    """Give the digest real content: preferences with observations, a scope, an inbox."""
    prefs = root / "_agent/memory/semantic/operator-preferences.md"
    text = prefs.read_text(encoding="utf-8")
    observations = "".join(f"- 2026-02-{d:02d}: observation number {d}\n" for d in range(1, 15))
    prefs.write_text(text.replace("## Observations\n", "## Observations\n" + observations))
    inbox = root / "inbox/captures/inbox.md"
    inbox.write_text(inbox.read_text() + "".join(f"- 2026-02-{d:02d}: item {d}\n" for d in range(1, 21)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=10)
    opts = parser.parse_args()
    exe = shutil.which("echo-memory") or sys.exit("echo-memory is not on PATH; pip install . first")
    with tempfile.TemporaryDirectory() as tmp:
        root, state = Path(tmp) / "vault", Path(tmp) / "state"
        build_recall_vault(root, state, opts.notes)
        seed_session_state(root)
        env = {**os.environ, "ECHO_VAULT": str(root), "ECHO_STATE_DIR": str(state),
               "ECHO_TODAY": "2026-03-01", "ECHO_NOW": "2026-03-01T09:30:00"}
        event = json.dumps({"session_id": "bench-session", "transcript_path": str(Path(tmp) / "t.jsonl"),
                            "cwd": tmp, "hook_event_name": "SessionStart", "source": "startup",
                            "permission_mode": "default"}).encode()
        times, sizes = [], []
        for _ in range(opts.runs + 1):
            start = time.perf_counter()
            out = subprocess.run([exe, "hook", "SessionStart"], input=event, env=env,
                                 capture_output=True, check=False)
            times.append((time.perf_counter() - start) * 1000)
            payload = json.loads(out.stdout) if out.stdout.strip() else {}
            context = payload.get("hookSpecificOutput", {}).get("additionalContext", "")
            sizes.append(len(context))
        times = times[1:]  # the first run warms the OS file cache
        print(f"SessionStart hook on {opts.notes} notes: median {statistics.median(times):.1f} ms "
              f"(min {min(times):.1f}, max {max(times):.1f}, {opts.runs} cold processes); "
              f"context {sizes[-1]} chars")


if __name__ == "__main__":
    main()
