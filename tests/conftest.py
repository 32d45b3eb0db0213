"""Shared fixtures: an isolated environment (no user config, pinned time) and a CLI runner."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

REPO = Path(__file__).resolve().parent.parent

# Deterministic property tests: every run draws the same examples (a test's own
# @settings inherits this), so CI never fails on a draw no earlier run made. A wider
# search is a bench job: HYPOTHESIS_PROFILE=explore.
hypothesis_settings.register_profile("echo", derandomize=True)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "echo"))

# Hermetic plugins: only the built-in distribution's entry points load, even where
# third-party plugins (the examples/) are installed in the same venv. Set at import time so
# every subprocess inherits it; a test wanting more sets ECHO_PLUGIN_DISTS itself.
PLUGIN_DISTS = "ECHO_PLUGIN_DISTS"
os.environ.setdefault(PLUGIN_DISTS, "echo-memory")
CLI = [sys.executable, "-c", "from plugins.cli_start import run; run()"]

# Hermetic caches: the plugin list cache (``echo_core.entry_point_cache``) of every test
# and subprocess goes to a folder of this run, never the user's ~/.cache; removed at exit.
_CACHE_HOME = tempfile.mkdtemp(prefix="echo-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME
atexit.register(shutil.rmtree, _CACHE_HOME, True)


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Environment pointing config, data and state into tmp_path, time pinned."""
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "home/.config"),
        "XDG_DATA_HOME": str(tmp_path / "home/.local/share"),
        "XDG_STATE_HOME": str(tmp_path / "home/.local/state"),
        "ECHO_TODAY": "2026-03-01",
        "ECHO_NOW": "2026-03-01T09:30:00",
    }
    for key in list(os.environ):
        if key.startswith("ECHO_") and key != PLUGIN_DISTS:
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    yield env


def run_cli(
    args: list[str], env: Mapping[str, str] | None = None, stdin: bytes | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``echo-memory`` in a fresh process (as a user would) and capture its output."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        CLI + args, input=stdin, capture_output=True, env=full_env, cwd=cwd or REPO, timeout=60,
        check=False,
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    )


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    """An empty folder for a vault."""
    path = tmp_path / "vault"
    path.mkdir()
    return path
