"""``echo-memory serve`` on an install without the ``mcp`` extra: exit 78 with one line
that names the extra to install, no traceback (the server's modules import the SDK at
their top, so the check is made where the command imports them). A module of ours that
is missing is a broken install, and is not passed off as a missing extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.mcp_kit import box_env, seeded_box

#: The console script with ``argv[1]`` made unimportable (None in ``sys.modules``).
WITHOUT = ("import sys\nsys.modules[sys.argv.pop(1)] = None\n"
           "from plugins.cli_start import run\nrun()\n")


def _serve(tmp_path: Path, missing: str, *args: str) -> subprocess.CompletedProcess[str]:
    box = seeded_box(tmp_path)
    return subprocess.run([sys.executable, "-c", WITHOUT, missing, "serve", *args],
                          env=box_env(box, ECHO_VAULT=str(box.vault),
                                      ECHO_STATE_DIR=str(box.state)),
                          cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          check=False, timeout=60)


@pytest.mark.parametrize("args", [("--stdio",), ("--port", "1")])
def test_serve_without_the_sdk_names_the_extra_and_exits_78(tmp_path: Path,
                                                            args: tuple[str, ...]) -> None:
    done = _serve(tmp_path, "mcp", *args)
    assert done.returncode == 78, done.stderr
    assert "pip install 'echo-memory[mcp]'" in done.stderr and "'mcp'" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_a_missing_module_of_ours_is_not_reported_as_the_extra(tmp_path: Path) -> None:
    done = _serve(tmp_path, "plugins.transport_mcp.server", "--stdio")
    assert done.returncode not in (0, 78)
    assert "echo-memory[mcp]" not in done.stderr
    assert "plugins.transport_mcp.server" in done.stderr
