"""A server killed mid-write leaves its temp file in the vault's ``_agent/.tmp``
(``.entities.journal.ndjson.<host>-<pid>-<random>.tmp``, 98 KB in the tester's run). The
storage sweeps that folder only when it writes, so the replacement server, answering
reads, kept it. The warm-up and every fast sweep job now remove the temp files of
writers that are gone, never a live writer's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from echo_core.tempfiles import host_tag
from plugins.transport_mcp.serving import warm_up
from plugins.transport_mcp.upkeep import VAULT_TEMP_DIR, fast_sweep_job, sweep_temp_files
from tests.capture_kit import VaultBox
from tests.mcp_kit import make_server


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _plant(box: VaultBox) -> tuple[Path, Path, Path]:
    """A dead writer's temp file, a live one's (this process), and a file that is no temp
    file of a writer; in the vault's temp folder."""
    folder = box.vault / VAULT_TEMP_DIR
    folder.mkdir(parents=True, exist_ok=True)
    dead = folder / f".entities.journal.ndjson.{host_tag()}-{_dead_pid()}-95d09ccd7cfa.tmp"
    live = folder / f".entities.journal.ndjson.{host_tag()}-{os.getpid()}-0a0b0c0d0e0f.tmp"
    other = folder / "notes.txt"
    for path in (dead, live, other):
        path.write_bytes(b"x" * 1000)
    return dead, live, other


def test_warm_up_removes_a_dead_writers_temp_file(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    dead, live, other = _plant(box)
    server = make_server(box)
    try:
        warm_up(server.runner)
    finally:
        server.runner.close()
    assert not dead.exists()
    assert live.exists() and other.exists()


def test_the_fast_sweep_job_removes_one_left_later(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    ctx = box.ctx()
    dead, live, other = _plant(box)
    fast_sweep_job(lambda: ctx)
    assert not dead.exists()
    assert live.exists() and other.exists()


def test_sweep_temp_files_counts_and_needs_no_folder(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    ctx = box.ctx()
    assert sweep_temp_files(ctx) == 0  # nothing there (or no folder): nothing to do
    _plant(box)
    assert sweep_temp_files(ctx) == 1
