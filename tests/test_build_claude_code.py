"""``echo-memory build claude-code <dir>``: a complete Claude Code plugin generated from the
installed plugins (SPEC §6.3), checked against the shapes of reference/claude-code.md, and
every generated hook command run as Claude Code would run it."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click
import pytest
import yaml

from echo_core.errors import EchoError
from echo_core.hookspecs import hookimpl
from echo_core.operations import OperationRegistry
from echo_core.ops.build import BUILD_RECORD, build
from echo_core.plugins import create_host
from echo_core.protocols import BuildTarget
from echo_core.testing import BuildTargetContract
from plugins.hooks_claude.build_part import ClaudeHooksPart
from plugins.transport_cli.app import build_cli
from plugins.transport_cli.derived import LazyOperationCommand
from plugins.transport_cli.skills import CliSkillsPart
from tests.capture_kit import VaultBox
from tests.hook_kit import (
    ECHO_BIN,
    FALLBACK_CLI,
    MAX_HOOK_OUTPUT,
    context_of,
    hook_env,
    payload,
    seeded_vault,
    work_tools,
    write_transcript,
)

REPO = Path(__file__).resolve().parent.parent
SKILL_NAMES = {"load", "save", "recall", "reflect", "triage", "health", "sweep", "doctor"}
NOT_MODEL_INVOCABLE = {"sweep", "triage"}
EVENTS = {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"}
HOOK_KEYS = {"type", "command", "timeout"}


def build_cli_run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [ECHO_BIN] if ECHO_BIN else FALLBACK_CLI
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd=cwd, env=env,
                          check=False,
                          timeout=60)


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return seeded_vault(tmp_path / "box")


@pytest.fixture
def plugin_dir(tmp_path: Path, box: VaultBox) -> Path:
    out = tmp_path / "out" / "echo-memory-plugin"
    proc = build_cli_run(["build", "claude-code", str(out), "--json"], tmp_path, hook_env(box))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["ok"] and result["action"] == "built"
    assert sorted(result["files"]) == sorted(
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    return out


# --- plugin.json and hooks.json -----------------------------------------------------------


def test_plugin_manifest_has_the_reference_shape(plugin_dir: Path) -> None:
    manifest = json.loads((plugin_dir / ".claude-plugin/plugin.json").read_text("utf-8"))
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", manifest["name"]) and manifest["name"] == "echo-memory"
    assert set(manifest) <= {"name", "version", "description", "author", "homepage",
                             "repository", "license", "keywords"}
    assert isinstance(manifest["version"], str) and re.match(r"\d+\.\d+", manifest["version"])
    assert isinstance(manifest["description"], str) and manifest["description"]
    assert all(isinstance(k, str) for k in manifest["keywords"])
    # `claude plugin validate --strict` fails without an author (issue 13, item 16)
    assert isinstance(manifest["author"], dict) and manifest["author"]["name"].strip()


def _hooks(plugin_dir: Path) -> dict[str, Any]:
    data = json.loads((plugin_dir / "hooks/hooks.json").read_text("utf-8"))
    assert set(data) == {"hooks"}
    hooks: dict[str, Any] = data["hooks"]
    return hooks


def test_hooks_json_has_the_reference_shape(plugin_dir: Path) -> None:
    hooks = _hooks(plugin_dir)
    assert EVENTS <= set(hooks)  # other parts add theirs (the habitat's recorder)
    for event, groups in hooks.items():
        assert isinstance(groups, list) and groups
        for group in groups:
            assert set(group) <= {"matcher", "hooks"}
            for hook in group["hooks"]:
                assert set(hook) == HOOK_KEYS and hook["type"] == "command"
                assert isinstance(hook["timeout"], int) and 0 < hook["timeout"] <= 60
                assert str(REPO) not in hook["command"]
    for event in EVENTS:  # echo-memory's own hook comes first
        (hook,) = hooks[event][0]["hooks"]
        assert f"hook {event}" in hook["command"] and "CLAUDE_PLUGIN_ROOT" not in hook["command"]
    assert hooks["SessionStart"][0]["matcher"] == "startup|clear|compact"
    assert "matcher" not in hooks["UserPromptSubmit"][0] and "matcher" not in hooks["Stop"][0]


# --- skills -------------------------------------------------------------------------------


def _skill(plugin_dir: Path, name: str) -> tuple[dict[str, Any], str]:
    text = (plugin_dir / "skills" / name / "SKILL.md").read_text("utf-8")
    match = re.match(r"---\n(.*?)\n---\n(.*)", text, re.DOTALL)
    assert match, f"{name}: no frontmatter block"
    front = yaml.safe_load(match.group(1))
    assert isinstance(front, dict)
    return front, match.group(2)


def test_every_skill_has_valid_frontmatter(plugin_dir: Path) -> None:
    assert {p.name for p in (plugin_dir / "skills").iterdir()} == SKILL_NAMES
    for name in SKILL_NAMES:
        front, body = _skill(plugin_dir, name)
        assert front["name"] == name
        assert isinstance(front["description"], str) and len(front["description"]) > 40
        assert front["allowed-tools"] == "Bash(echo-memory:*)"
        assert front.get("disable-model-invocation", False) is (name in NOT_MODEL_INVOCABLE)
        assert "echo-memory " in body


def _command_lines(body: str) -> list[list[str]]:
    """``echo-memory ...`` lines of the skill's code blocks, as shell words."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", body, re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #", 1)[0].strip()
            if "echo-memory " in line:
                words = shlex.split(line[line.index("echo-memory "):].split("|")[0])
                lines.append(words)
    return lines


def test_skill_command_lines_use_only_real_verbs_and_options(plugin_dir: Path) -> None:
    cli = build_cli(create_host(env={}, strict=True))
    for name in SKILL_NAMES:
        _, body = _skill(plugin_dir, name)
        for words in _command_lines(body):
            command: click.Command = cli
            rest = words[1:]
            while isinstance(command, click.Group) and rest:
                default = getattr(command, "default_command", None)  # `reflect FILE`
                if default is not None and rest[0] not in command.commands:
                    command = default
                    break
                assert rest[0] in command.commands, f"{name}: unknown verb in {words}"
                command, rest = command.commands[rest[0]], rest[1:]
            if isinstance(command, LazyOperationCommand):
                command = command.real()
            options = {o for p in command.params if isinstance(p, click.Option) for o in p.opts}
            for word in rest:
                if word.startswith("--"):
                    assert word.split("=", 1)[0] in options, f"{name}: no {word} in {words}"


def test_save_recall_and_reflect_teach_concrete_commands(plugin_dir: Path) -> None:
    assert 'echo-memory capture "' in _skill(plugin_dir, "save")[1]
    assert "--budget-chars 1500" in _skill(plugin_dir, "recall")[1]
    reflect = _skill(plugin_dir, "reflect")[1]
    assert "--apply" in reflect
    bundle = json.loads(re.search(r"```json\n(.*?)```", reflect, re.DOTALL).group(1))  # type: ignore[union-attr]
    assert {"slug", "log_body"} <= set(bundle)


# --- the generated hook commands, run as Claude Code runs them ------------------------------


def _run_generated(command: str, stdin: dict[str, Any], env: dict[str, str],
                   cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], input=json.dumps(stdin), capture_output=True,
                          check=False,
                          text=True, env=env, cwd=cwd, timeout=60)


@pytest.mark.skipif(ECHO_BIN is None, reason="needs the installed echo-memory console script")
def test_every_generated_hook_command_works(plugin_dir: Path, box: VaultBox, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    transcript = write_transcript(tmp_path / "t.jsonl", "gen-1", project,
                                  prompts=["fix the deploy"], tools=work_tools(project))
    fields = {"SessionStart": {"source": "startup"},
              "UserPromptSubmit": {"prompt": "how do we deploy the web app"},
              "Stop": {"stop_hook_active": False, "last_assistant_message": "done"},
              "PreCompact": {"trigger": "auto", "custom_instructions": ""},
              "SessionEnd": {"reason": "prompt_input_exit"}}
    env = hook_env(box)
    outputs = {}
    for event in EVENTS:
        command = _hooks(plugin_dir)[event][0]["hooks"][0]["command"]
        proc = _run_generated(command, payload(event, "gen-1", transcript, project, **fields[event]),
                              env, project)
        assert proc.returncode == 0, f"{event}: {proc.stderr}"
        assert len(proc.stdout) <= MAX_HOOK_OUTPUT
        outputs[event] = proc.stdout
    assert "## Scope" in context_of(outputs["SessionStart"], "SessionStart")
    assert "deploy-checklist" in context_of(outputs["UserPromptSubmit"], "UserPromptSubmit")
    assert json.loads(outputs["Stop"])["decision"] == "block"
    assert outputs["PreCompact"] == "" and outputs["SessionEnd"] == ""
    assert list((box.vault / "_agent/memory/working").glob("*-checkpoint-gen1*"))


def test_generated_hooks_are_quiet_and_exit_0_without_the_executable(
        plugin_dir: Path, box: VaultBox, tmp_path: Path) -> None:
    env = hook_env(box, ECHO_MEMORY_BIN=str(tmp_path / "nowhere" / "echo-memory"))
    for event in EVENTS:
        proc = _run_generated(_hooks(plugin_dir)[event][0]["hooks"][0]["command"],
                              payload(event, "s", None, tmp_path, source="startup"), env, tmp_path)
        assert proc.returncode == 0 and proc.stdout == "", event


# --- the build operation ------------------------------------------------------------------


def test_rebuild_replaces_the_previous_build_whole(plugin_dir: Path) -> None:
    stale = plugin_dir / "skills" / "retired" / "SKILL.md"
    stale.parent.mkdir()
    stale.write_text("old\n")
    before = (plugin_dir / "hooks/hooks.json").read_bytes()
    build(create_host(env={}), "claude-code", str(plugin_dir))
    assert not stale.exists() and (plugin_dir / "hooks/hooks.json").read_bytes() == before
    assert json.loads((plugin_dir / BUILD_RECORD).read_text())["target"] == "claude-code"


def test_build_refuses_a_folder_it_did_not_build(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.py").write_text("print('mine')\n")
    with pytest.raises(EchoError) as error:
        build(create_host(env={}), "claude-code", str(project))
    assert error.value.code == 2
    assert sorted(p.name for p in project.iterdir()) == ["main.py"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]  # no staging left over


def test_unknown_target_lists_the_installed_ones(tmp_path: Path) -> None:
    with pytest.raises(EchoError, match="claude-code") as error:
        build(create_host(env={}), "vscode", str(tmp_path / "out"))
    assert error.value.code == 2 and not (tmp_path / "out").exists()


class _Clashing:
    """A plugin whose part writes a file another part already writes."""

    class Part:
        def contribute(self, out_dir: str, context: Any) -> list[str]:
            (Path(out_dir) / "hooks").mkdir(parents=True, exist_ok=True)
            (Path(out_dir) / "hooks/hooks.json").write_text("{}\n")
            return ["hooks/hooks.json"]

    @hookimpl
    def register_build_targets(self, register: Any) -> None:
        register("claude-code:zz_clash", self.Part())


def test_two_parts_writing_one_file_fail_and_keep_the_old_build(plugin_dir: Path) -> None:
    before = (plugin_dir / "hooks/hooks.json").read_bytes()
    host = create_host(env={}, extra=[("zz_clash", _Clashing())])
    with pytest.raises(EchoError, match="zz_clash"):
        build(host, "claude-code", str(plugin_dir))
    assert (plugin_dir / "hooks/hooks.json").read_bytes() == before


def test_build_command_answers_usage_errors_with_exit_2(tmp_path: Path, box: VaultBox) -> None:
    proc = build_cli_run(["build", "nope", str(tmp_path / "x")], tmp_path, hook_env(box))
    assert proc.returncode == 2 and "claude-code" in proc.stderr


# --- each part honours the BuildTarget contract ---------------------------------------------


class TestClaudeHooksPart(BuildTargetContract):
    @pytest.fixture
    def build_part(self) -> BuildTarget:
        return ClaudeHooksPart()


class TestCliSkillsPart(BuildTargetContract):
    @pytest.fixture
    def build_part(self) -> BuildTarget:
        return CliSkillsPart()

    @pytest.fixture
    def build_context(self) -> Any:
        return SimpleNamespace(host=create_host(env={}, strict=True))


def test_skills_cover_every_verb_the_spec_names() -> None:
    registry = OperationRegistry.from_host(create_host(env={}, strict=True))
    assert {skill.name for _, skill in registry.skills()} == SKILL_NAMES


# --- .mcp.json (transport_mcp's part) -----------------------------------------------------


def test_mcp_json_starts_the_installed_server_over_stdio(tmp_path: Path) -> None:
    from plugins.transport_mcp.build_part import McpJsonPart

    written = McpJsonPart().contribute(str(tmp_path), None)
    assert written == [".mcp.json"]
    doc = json.loads((tmp_path / ".mcp.json").read_text())
    server = doc["mcpServers"]["echo"]
    assert isinstance(server["command"], str) and isinstance(server["args"], list)
    assert "serve --stdio" in " ".join(server["args"]) and "/work/" not in json.dumps(doc)


class TestMcpJsonPart(BuildTargetContract):
    @pytest.fixture
    def build_part(self) -> Any:
        from plugins.transport_mcp.build_part import McpJsonPart

        return McpJsonPart()
