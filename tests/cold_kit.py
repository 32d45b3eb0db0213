"""Helpers for tests that run ``echo-memory`` in a fresh interpreter and check which
modules it imported (a cold process's cost): an isolated environment and a runner that
reports whether numpy was imported.

Not a test module (no ``test_`` prefix).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: ``echo-memory`` in a new interpreter that prints, last on stderr at exit, whether
#: numpy was imported.
_REPORTING_CLI = [sys.executable, "-c", (
    "import atexit, sys\n"
    "atexit.register(lambda: print('numpy' in sys.modules, file=sys.stderr))\n"
    "from plugins.cli_start import run\nrun()\n")]


def cold_env(tmp_path: Path) -> dict[str, str]:
    """An environment with the vault, state, config and home in ``tmp_path``, time pinned."""
    return {**os.environ, "ECHO_VAULT": str(tmp_path / "vault"),
            "ECHO_STATE_DIR": str(tmp_path / "state"), "HOME": str(tmp_path / "home"),
            "ECHO_CONFIG": str(tmp_path / "none.toml"), "ECHO_TODAY": "2026-03-01",
            "ECHO_NOW": "2026-03-01T09:30:00", "PYTHONPATH": str(REPO)}


def run_cold(env: dict[str, str], *args: str) -> tuple[str, bool]:
    """Run ``echo-memory args`` in a new process (it must exit 0): its stdout, and whether
    it imported numpy."""
    done = subprocess.run([*_REPORTING_CLI, *args], env=env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr.strip().splitlines()[-1] == "True"
