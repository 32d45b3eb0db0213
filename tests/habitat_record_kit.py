"""Helpers for the habitat record tests: the hook recorder run as Claude Code runs it, a
vault box with its loom, and the loom read back raw.

Not a test module (no ``test_`` prefix); imported by ``test_habitat_record*.py`` and
``test_habitat_loom*.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from echo_core.context import EchoContext
from plugins.habitat.loom import Loom
from plugins.habitat.paths import loom_dir
from tests.capture_kit import VaultBox

REPO = Path(__file__).resolve().parent.parent
HABITAT = REPO / "plugins" / "habitat"
RECORDER = HABITAT / "hook_record_run.py"
NOW = "2026-03-01T09:30:00"


def box_at(root: Path) -> VaultBox:
    """An initialised vault under ``root``."""
    return VaultBox(root).init()


def hook_env(box: VaultBox, **extra: str) -> dict[str, str]:
    """The environment a hook process of ``box``'s vault gets (no ECHO_* of this run)."""
    env = box.env(ECHO_VAULT=str(box.vault), ECHO_STATE_DIR=str(box.state), ECHO_NOW=NOW,
                  PATH="/usr/bin:/bin")
    env.update(extra)
    return env


def run_recorder(event: str, payload: Mapping[str, Any] | bytes, env: Mapping[str, str],
                 script: Path = RECORDER, cwd: Path | None = None
                 ) -> subprocess.CompletedProcess[bytes]:
    """The recorder as the built hook runs it: ``python -S -E <script> <event>``."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
    return subprocess.run([sys.executable, "-S", "-E", str(script), event], input=data,
                          capture_output=True, env=dict(env), cwd=cwd or script.parent,
                          timeout=60, check=False)


def loom_of(ctx: EchoContext) -> Loom:
    """``ctx``'s loom."""
    return Loom(loom_dir(ctx))


def raw_lines(loom: Loom) -> list[bytes]:
    """Every line of every day file, as written (torn tail included)."""
    out: list[bytes] = []
    for day in loom.days():
        out.extend(loom.day_file(day).read_bytes().splitlines(keepends=True))
    return out


def loom_json(loom: Loom) -> list[dict[str, Any]]:
    """Every line parsed (each must be a JSON object)."""
    return [json.loads(line) for line in raw_lines(loom)]


def payload(session: str, **fields: Any) -> dict[str, Any]:
    """A hook stdin object with the fields every event carries."""
    return {"session_id": session, "transcript_path": "/nowhere.jsonl", "cwd": "/work",
            "permission_mode": "default", **fields}


def kill_quietly(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL ``proc`` (if still running) and reap it."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)


def python() -> str:
    """This interpreter (the recorder's tests run it as the hooks would run python3)."""
    return sys.executable
