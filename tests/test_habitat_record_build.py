"""The habitat's part of ``echo-memory build claude-code``: the recorder's scripts in the
plugin (byte-identical to the installed package's), its hooks in hooks/hooks.json beside
echo-memory's own, each generated command working as Claude Code runs it, and the
plugin accepted by ``claude plugin validate --strict`` when that CLI is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from echo_core.ops.build import build
from echo_core.plugins import create_host
from echo_core.protocols import BuildTarget
from echo_core.testing import BuildTargetContract
from plugins.habitat.build_part import (
    CORE_FILES,
    EVENTS,
    RECORDER_FILES,
    SCRIPTS_DIR,
    HabitatHooksPart,
    hook_command,
)
from plugins.hooks_claude.events import EVENTS as ECHO_EVENTS
from tests.capture_kit import VaultBox
from tests.habitat_record_kit import HABITAT, box_at, hook_env, loom_json, loom_of, payload


class TestHabitatHooksPart(BuildTargetContract):
    @pytest.fixture
    def build_part(self) -> BuildTarget:
        return HabitatHooksPart()


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("build") / "echo-memory"
    build(create_host(env={}), "claude-code", str(out))
    return out


def _hooks(plugin_dir: Path) -> dict[str, Any]:
    hooks: dict[str, Any] = json.loads((plugin_dir / "hooks/hooks.json").read_text())["hooks"]
    return hooks


def test_the_recorder_is_copied_byte_for_byte(plugin_dir: Path) -> None:
    for name in RECORDER_FILES:
        assert (plugin_dir / SCRIPTS_DIR / name).read_bytes() == (HABITAT / name).read_bytes()
    imported = {"hook_record", "hook_record_paths", "hook_record_redact", "hook_record_json",
                "hook_record_sre", "loom_file"}
    assert {f"{n}.py" for n in imported} | {"hook_record_run.py"} == set(RECORDER_FILES)
    core = Path(__file__).resolve().parents[1] / "echo_core"
    for name in CORE_FILES:
        assert (plugin_dir / SCRIPTS_DIR / name).read_bytes() == (core / name).read_bytes()


#: Spellings of one PostgreSQL vault, and two other vaults.
PG_SPELLINGS = ("postgresql://u:secret@localhost:5432/db",
                "postgres://u@127.0.0.1/db?sslmode=disable",
                "postgresql://u@LocalHost./db?connect_timeout=3&schema=echo_memory")
PG_OTHERS = ("postgresql://u@localhost/db?schema=team_b", "postgresql://u@localhost:5433/db")


def test_the_built_recorder_keys_a_postgres_vault_as_echo_memory_does(
        plugin_dir: Path, tmp_path: Path) -> None:
    from echo_core.context import create_context

    probe = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hook_record_paths as p; "
             "print(json.dumps([p.state_dir({'HOME': sys.argv[2], 'ECHO_VAULT': u, "
             "'ECHO_STATE_DIR': sys.argv[2]}) for u in sys.argv[3:]]))")
    urls = (*PG_SPELLINGS, *PG_OTHERS)
    proc = subprocess.run([sys.executable, "-S", "-E", "-c", probe,
                           str(plugin_dir / SCRIPTS_DIR), str(tmp_path), *urls],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    ours = json.loads(proc.stdout)
    theirs = [str(create_context(env={"HOME": str(tmp_path), "ECHO_VAULT": url,
                                      "ECHO_STATE_DIR": str(tmp_path)}).state_dir)
              for url in urls]
    assert ours == theirs
    assert len(set(ours[:len(PG_SPELLINGS)])) == 1
    assert len(set(ours)) == 1 + len(PG_OTHERS)


def test_hooks_json_holds_echo_memorys_hooks_then_the_recorders(plugin_dir: Path) -> None:
    hooks = _hooks(plugin_dir)
    for event, matcher, timeout in EVENTS:
        groups = hooks[event]
        ours = groups[-1]
        assert ours.get("matcher") == matcher
        assert ours["hooks"] == [{"type": "command", "command": hook_command(event),
                                  "timeout": timeout}]
        if event in ECHO_EVENTS:
            assert len(groups) == 2 and "hook " + event in groups[0]["hooks"][0]["command"]
        else:
            assert len(groups) == 1
    assert "matcher" not in hooks["SessionStart"][-1]  # resume too


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return box_at(tmp_path / "box")


def _run_generated(command: str, stdin: dict[str, Any], env: dict[str, str],
                   cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], input=json.dumps(stdin), capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=60, check=False)


def test_every_generated_recorder_command_records_its_event(
        plugin_dir: Path, box: VaultBox, tmp_path: Path) -> None:
    env = hook_env(box, CLAUDE_PLUGIN_ROOT=str(plugin_dir), ECHO_HABITAT_PYTHON=sys.executable)
    fields = {"SessionStart": {"source": "startup"}, "UserPromptSubmit": {"prompt": "hello"},
              "PreToolUse": {"tool_name": "Bash", "tool_input": {"command": "ls"},
                             "tool_use_id": "t1"},
              "PostToolUse": {"tool_name": "Bash", "tool_input": {"command": "ls"},
                              "tool_use_id": "t1", "tool_response": {"stdout": "a"}},
              "PostToolUseFailure": {"tool_name": "Bash", "tool_input": {"command": "x"},
                                     "tool_use_id": "t2", "error": "boom"},
              "Stop": {"last_assistant_message": "done"},
              "SessionEnd": {"reason": "other"}}
    hooks = _hooks(plugin_dir)
    for event, _, _ in EVENTS:
        proc = _run_generated(hooks[event][-1]["hooks"][0]["command"],
                              payload("gen", hook_event_name=event, **fields[event]), env,
                              tmp_path)
        assert proc.returncode == 0 and proc.stdout == "", (event, proc.stderr)
    kinds = [r["kind"] for r in loom_json(loom_of(box.ctx()))]
    assert kinds == ["session", "prompt", "tool", "tool", "reply", "session"]


def test_generated_commands_are_harmless_without_a_python(
        plugin_dir: Path, box: VaultBox, tmp_path: Path) -> None:
    env = hook_env(box, CLAUDE_PLUGIN_ROOT=str(plugin_dir),
                   ECHO_HABITAT_PYTHON=str(tmp_path / "nowhere" / "python3"))
    for event, _, _ in EVENTS:
        proc = _run_generated(_hooks(plugin_dir)[event][-1]["hooks"][0]["command"],
                              payload("s"), env, tmp_path)
        assert proc.returncode == 0 and proc.stdout == "", event


def _claude() -> str | None:
    named = os.environ.get("ECHO_CLAUDE_CLI")
    return named if named else shutil.which("claude")


def test_the_built_plugin_passes_claude_plugin_validate(plugin_dir: Path) -> None:
    cli = _claude()
    if cli is None:
        if os.environ.get("ECHO_REQUIRE_CLAUDE") == "1":
            pytest.fail("ECHO_REQUIRE_CLAUDE=1 but no Claude Code CLI is installed")
        pytest.skip("no Claude Code CLI here (set ECHO_CLAUDE_CLI or put claude on PATH)")
    proc = subprocess.run([cli, "plugin", "validate", "--strict", str(plugin_dir)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0 and "Validation passed" in proc.stdout, proc.stdout + proc.stderr
