"""Crash safety of the write path on the folder backend (SPEC §1.3, §5.4): a capture
process killed at random instants, 200 times, never leaves a torn note or a corrupt index
or outbox, and every capture it acknowledged is on disk."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from echo_core.context import create_context
from echo_core.entities import EntityStore
from echo_core.frontmatter import parse_frontmatter
from echo_core.ops.init import init_vault

RUNS = 200
REPO = Path(__file__).resolve().parent.parent


def _check_vault(vault: Path, state: Path, acked: list[dict[str, str]]) -> None:
    for note in vault.rglob("*.md"):
        text = note.read_text(encoding="utf-8")
        fm, _, error = parse_frontmatter(text)
        assert error is None, f"torn or corrupt note {note}: {error}"
        if "/resources/concepts/" in str(note) and note.name != "README.md":
            assert fm.get("type") == "concept" and text.rstrip().endswith(("## Related", "]]")), note
    ctx = create_context(vault=str(vault), state_dir=str(state), env={"HOME": str(state), "ECHO_TODAY": "2026-03-01"})
    # a kill mid-write may leave a hidden temp file; it is never listed as a note
    assert not [p for p in ctx.storage.list("") if p.endswith(".tmp")]
    index = EntityStore(ctx.storage).load()  # raises on a corrupt snapshot
    for entity in index.entities.values():
        assert (vault / entity.path).is_file(), f"index entry without note: {entity.path}"
    for outbox in state.rglob("outbox.ndjson"):
        for line in outbox.read_bytes().splitlines()[:-1]:
            json.loads(line)
    for ack in acked:
        assert ack["line"] in (vault / ack["path"]).read_text(encoding="utf-8"), ack


def test_killed_capture_processes_leave_no_torn_note_and_lose_no_acknowledged_capture(
    tmp_path: Path,
) -> None:
    vault, state = tmp_path / "vault", tmp_path / "state"
    env = {"HOME": str(tmp_path / "home"), "ECHO_TODAY": "2026-03-01",
           "ECHO_CONFIG": str(tmp_path / "none.toml")}
    init_vault(create_context(vault=str(vault), state_dir=str(state), env=env))
    rng = random.Random(20261201)
    acked: list[dict[str, str]] = []
    killed_mid_run = 0
    child_env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONWARNINGS": "ignore"}
    for run in range(RUNS):
        spec = json.dumps({"vault": str(vault), "state_dir": str(state), "env": env,
                           "run": run, "compact_after": 15})
        proc = subprocess.Popen(
            [sys.executable, "-c", "from tests.crash_worker import main; main()", spec],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env, cwd=REPO)
        assert proc.stdout is not None
        first = proc.stdout.readline()  # wait until it is capturing (load-independent)
        time.sleep(rng.uniform(0.0, 0.08))  # then kill at a random instant of the loop
        proc.send_signal(signal.SIGKILL)
        rest, _ = proc.communicate()
        lines = (first + rest).decode("utf-8").splitlines()
        acked.extend(json.loads(line) for line in lines if line.endswith("}"))
        killed_mid_run += bool(lines)
        if run % 20 == 19:
            _check_vault(vault, state, acked)
    _check_vault(vault, state, acked)
    assert killed_mid_run >= RUNS // 2, "most kills should land while captures are running"
    assert len(acked) > RUNS
