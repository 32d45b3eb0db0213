"""``echo-memory hook EVENT`` runs without click (``run_direct``), and answers exactly
as the click ``hook`` command does for the same event and stdin."""

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
except SystemExit as done:
    code = done.code
print(json.dumps([code, "click" in sys.modules]), file=sys.stderr)
"""


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return seeded_vault(tmp_path / "box")


def _run(args: list[str], stdin: dict[str, object], env: dict[str, str],
         cwd: Path) -> tuple[str, int, bool]:
    """(stdout, exit code, whether click was imported) of ``echo-memory <args>``."""
    done = subprocess.run([sys.executable, "-c", _PROBE, *args],
                          input=json.dumps(stdin).encode("utf-8"), capture_output=True,
                          env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
                          cwd=cwd, check=False, timeout=120)
    code, clicked = json.loads(done.stderr.decode("utf-8").strip().splitlines()[-1])
    return done.stdout.decode("utf-8"), code, clicked


@pytest.mark.parametrize(("event", "fields"), [
    ("UserPromptSubmit", {"prompt": "How do we deploy the web app?"}),
    ("UserPromptSubmit", {"prompt": "write a haiku about the sea"}),
    ("SessionStart", {"source": "resume"}),
    ("NoSuchEvent", {}),
])
def test_the_direct_answer_is_the_click_commands_without_importing_click(
        box: VaultBox, tmp_path: Path, event: str, fields: dict[str, object]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = {**hook_env(box), "ECHO_SESSION_PASS": "inline"}
    stdin = payload(event, "s1", None, project, **fields)
    direct = _run(["hook", event], stdin, env, project)
    through_click = _run(["hook", event, "--json"], stdin, env, project)
    assert direct[:2] == through_click[:2] == (direct[0], 0)
    assert direct[2] is False and through_click[2] is True
    if event == "UserPromptSubmit" and "deploy" in str(fields["prompt"]):
        assert "deploy-checklist" in direct[0]


@pytest.mark.parametrize("args", [["hook", "--help"], ["hook"], ["--json", "hook", "Stop"]])
def test_help_and_other_forms_of_hook_go_through_click(box: VaultBox, tmp_path: Path,
                                                       args: list[str]) -> None:
    out, code, clicked = _run(args, {}, {**hook_env(box)}, tmp_path)
    assert clicked is True
    if args == ["hook", "--help"]:
        assert code == 0 and "Answer a Claude Code hook EVENT" in out
    if args == ["hook"]:
        assert code == 2  # click: missing EVENT


def test_a_disabled_hooks_plugin_leaves_hook_unknown(box: VaultBox, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('disabled = ["hooks_claude"]\n', "utf-8")
    env = {**hook_env(box), "ECHO_CONFIG": str(config)}
    out, code, clicked = _run(["hook", "UserPromptSubmit"], {"prompt": "x"}, env, tmp_path)
    assert (out, code, clicked) == ("", 2, True)  # click: no such command
