"""``note-stats`` appears on every surface with no change to echo-memory: the CLI, the MCP
server (``echo-memory serve --stdio`` driven by the MCP SDK client) and the built Claude
Code plugin's skills. Each test runs the real installed command in a fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import echo_core

ECHO_MEMORY = str(Path(sys.executable).with_name("echo-memory"))
NOTE_PATH = "notes/ada.md"
NOTE = "# Ada Lovelace\n\nAda wrote the first program and linked [[Charles Babbage]].\n"


@pytest.fixture
def vault(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A vault holding one note, and the isolated environment to reach it with (only the
    built-in distribution and this one load: ECHO_PLUGIN_DISTS)."""
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local/share"),
               XDG_STATE_HOME=str(home / ".local/state"), ECHO_TODAY="2026-03-01",
               ECHO_VAULT=str(tmp_path / "vault"), ECHO_STATE_DIR=str(tmp_path / "state"),
               ECHO_PLUGIN_DISTS="echo-memory,echo-note-stats")
    (tmp_path / "vault").mkdir()
    ctx = echo_core.create_context(env=env)  # set up in process: fewer slow start-ups
    assert echo_core.invoke(ctx, "init").ok
    assert echo_core.invoke(ctx, "put", {"path": NOTE_PATH, "text": NOTE}).ok
    return tmp_path, env


def echo_memory(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ECHO_MEMORY, *args], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


def test_cli_help_run_and_bounds(vault: tuple[Path, dict[str, str]]) -> None:
    _, env = vault
    shown = echo_memory(["note-stats", "--help"], env)
    assert shown.returncode == 0 and "--top" in shown.stdout and "0<=x<=50" in shown.stdout
    assert "note-stats" in echo_memory(["--help"], env).stdout
    done = echo_memory(["note-stats", NOTE_PATH, "--top", "1", "--json"], env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["words"], data["wikilinks"], data["top_words"]) == (
        11, 1, [{"word": "ada", "count": 2}])
    prose = echo_memory(["note-stats", NOTE_PATH], env)
    assert prose.stdout.startswith(f"{NOTE_PATH}: 11 words, 1 wikilinks"), prose.stdout
    too_many = echo_memory(["note-stats", NOTE_PATH, "--top", "51"], env)
    assert too_many.returncode == 2 and "--top" in too_many.stderr
    missing = echo_memory(["note-stats", "notes/none.md"], env)
    assert missing.returncode == 44, missing.stderr


def test_mcp_lists_and_calls_the_tool_with_the_declared_override(
        vault: tuple[Path, dict[str, str]]) -> None:
    root, env = vault
    params = StdioServerParameters(command=ECHO_MEMORY, args=["serve", "--stdio"], env=env)

    async def main() -> tuple[Any, Any, Any]:
        with (root / "stdio.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                ok = await client.call_tool("echo_note_stats", {"path": NOTE_PATH, "top": 2})
                bad = await client.call_tool("echo_note_stats", {"path": NOTE_PATH, "top": 11})
                return tools, ok, bad

    tools, ok, bad = anyio.run(main)
    tool = tools["echo_note_stats"]
    top = tool.input_schema["properties"]["top"]
    assert (top["minimum"], top["maximum"]) == (0, 10)  # McpParam: models get at most 10
    assert tool.input_schema["required"] == ["path"]
    assert tool.input_schema["additionalProperties"] is False
    assert {"words", "wikilinks", "links", "top_words"} <= set(tool.output_schema["properties"])
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert not ok.is_error and ok.structured_content["words"] == 11
    assert "11 words" in "".join(getattr(block, "text", "") for block in ok.content)
    assert bad.is_error and bad.structured_content["error"]["code"] == "usage"
    assert bad.structured_content["error"]["fields"] == ["top"]


def test_build_writes_the_skill(vault: tuple[Path, dict[str, str]]) -> None:
    root, env = vault
    done = echo_memory(["build", "claude-code", str(root / "out")], env)
    assert done.returncode == 0, done.stderr
    skill = (root / "out/skills/note-stats/SKILL.md").read_text("utf-8")
    assert skill.startswith('---\nname: "note-stats"\ndescription: "Count the words')
    assert 'argument-hint: "<note path>"' in skill
    assert "echo-memory note-stats PATH [options]" in skill and "--top VALUE" in skill
