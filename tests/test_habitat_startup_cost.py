"""The habitat costs a session start nothing until a learning was stored: the insight
provider answers from one file check, and a prompt's hook never loads the habitat."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.capture_kit import VaultBox
from tests.hook_kit import hook_env, payload, seeded_vault

_PROBE = """
import json, sys
from plugins.transport_cli.app import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("plugins.habitat"))),
      file=sys.stderr)
"""


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return seeded_vault(tmp_path / "box")


def _habitat_modules(event: str, box: VaultBox, project: Path, **fields: object) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "hook", event],
        input=json.dumps(payload(event, "s1", None, project, **fields)).encode("utf-8"),
        capture_output=True, env={**hook_env(box), "ECHO_SESSION_PASS": "inline",
                                  "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        cwd=project, check=False, timeout=120)
    return set(json.loads(done.stderr.decode("utf-8").strip().splitlines()[-1]))


def test_no_learnings_store_means_no_insight_modules_at_session_start(
        box: VaultBox, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    loaded = _habitat_modules("SessionStart", box, project, source="startup")
    assert "plugins.habitat" in loaded  # the provider was asked
    assert not {m for m in loaded if "insight" in m or "learning" in m}, loaded
    assert not list(box.state.rglob("learnings.sqlite"))  # and nothing was created
