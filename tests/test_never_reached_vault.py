"""A server vault this machine never reached is not written to later: a capture to an
Obsidian URL with a wrong port (nothing listens) exits 69 saying nothing was written or
queued, and the outbox stays empty, where it used to answer "queued" as if the note were
saved for later. A server it did reach before still queues (the outbox tests)."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.conftest import run_cli


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_capture_to_a_server_never_reached_is_refused_not_queued(tmp_path: Path) -> None:
    state = tmp_path / "state"
    env = {"HOME": str(tmp_path), "ECHO_STATE_DIR": str(state),
           "ECHO_VAULT": f"obsidian+http://127.0.0.1:{_free_port()}",
           "OBSIDIAN_API_KEY": "k" * 32, "ECHO_TODAY": "2026-03-01"}
    done = run_cli(["capture", "Ada Lovelace", "--kind", "person", "--body", "Met her."], env)
    assert done.returncode == 69, (done.stdout, done.stderr)
    assert "never reached" in done.stderr and "not queued" in done.stderr
    assert "Traceback" not in done.stderr
    assert not [p for p in state.rglob("*") if p.is_file() and "outbox" in p.name]
