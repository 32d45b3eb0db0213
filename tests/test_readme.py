"""The README is run, not just read: its two opening commands, its shell blocks (the tour,
Claude Code, undo) as one script against a temp home, its Python examples, and the facts
it states (exit codes, --json, where backups go) checked against the code.

The Claude Code blocks call the real `claude` CLI when it is installed (`ECHO_CLAUDE_CLI`
names it, else PATH); `.ci/run` installs it from npm and sets ``ECHO_REQUIRE_CLAUDE=1``,
so there a missing CLI fails the test instead of being stubbed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import click
import pytest

from echo_core import ExitCode, OperationRegistry, create_context, create_host, invoke
from plugins.transport_cli.app import build_cli
from tests.capture_kit import isolated_env

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text("utf-8")
BIN = Path(sys.executable).parent


def blocks(language: str) -> list[str]:
    """The README's fenced blocks of ``language``, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", README, flags=re.S | re.M)


def claude_cli() -> str | None:
    """The Claude Code CLI to run the README's `claude` lines with, if installed."""
    named = os.environ.get("ECHO_CLAUDE_CLI")
    return named if named else shutil.which("claude")


def test_readme_opens_with_the_install_and_serve_and_the_test_commands() -> None:
    first_lines = README.split("\n## ")[0]
    assert first_lines.count("```sh") == 2, "exactly two commands before the first section"
    install, tests = blocks("sh")[:2]
    assert install.strip().startswith("python3 -m venv .venv && . .venv/bin/activate")
    assert 'pip install ".[mcp]"' in install and install.strip().endswith(
        "echo-memory init && echo-memory serve")
    assert tests.strip().endswith('pip install -e ".[dev]" && python -m pytest -q -n 2')
    ci = (ROOT / ".ci/run").read_text("utf-8")
    assert 'pip install -q -e ".[dev]"' in ci and "python -m pytest -q -n 2\n" in ci


def test_readme_states_the_python_it_needs_and_which_vault_the_tour_uses() -> None:
    assert "Python 3.11 or newer" in README
    tour = README[README.index("## A short tour"):]
    assert "not in the embedded one the first command serves" in tour.split("```")[0]


def tour_env(home: Path) -> dict[str, str]:
    env = isolated_env(home, ECHO_NOW="09:30", PATH=f"{BIN}{os.pathsep}/usr/bin:/bin")
    cli = claude_cli()
    if cli is not None:
        env["PATH"] = f"{Path(cli).parent}{os.pathsep}{env['PATH']}"
    return env


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """Every shell block after the first two, run in order as one script (as a reader
    pastes them into one shell), in a fresh home."""
    home = tmp_path_factory.mktemp("readme-home")
    script = "\n".join(blocks("sh")[2:])
    if claude_cli() is None:
        if os.environ.get("ECHO_REQUIRE_CLAUDE") == "1":
            pytest.fail("ECHO_REQUIRE_CLAUDE=1 but no Claude Code CLI is installed")
        # Without the CLI only the `claude` lines are left out, and said so in the output.
        script = 'claude() { echo "claude CLI not installed: not run: claude $*"; }\n' + script
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=home,
                          env=tour_env(home), capture_output=True, text=True, timeout=300)


def test_readme_shell_blocks_run_as_written(tour: subprocess.CompletedProcess[str]) -> None:
    assert tour.returncode == 0, tour.stdout[-3000:] + tour.stderr[-3000:]
    out = tour.stdout
    assert "created resources/people/ada-lovelace.md" in out
    assert "updated resources/people/ada-lovelace.md" in out
    assert "resources/people/ada-lovelace.md" in out.split("first program")[0] or (
        "ada-lovelace.md" in out)
    assert "wrote resources/references/reading.md" in out
    assert "restored resources/references/reading.md to version" in out
    assert "backed up" in out


def test_readme_claude_code_blocks_pass_the_real_validator(
        tour: subprocess.CompletedProcess[str]) -> None:
    if claude_cli() is None:
        assert "claude CLI not installed: not run: claude plugin validate" in tour.stdout
        pytest.skip("no Claude Code CLI here (.ci/run installs it and requires this test)")
    assert tour.stdout.count("Validation passed") == 2, tour.stdout
    assert "Successfully installed plugin: echo-memory@local-plugins" in tour.stdout


def test_readme_says_where_backups_really_go(tour: subprocess.CompletedProcess[str]) -> None:
    where = re.search(r"backed up .* to (\S+\.zip)", tour.stdout)
    assert where is not None, tour.stdout
    assert "/.local/state/echo-memory/vaults/" in where.group(1) and "/backups/" in where.group(1)
    assert "`<state dir>/vaults/<vault id>/backups/`" in README
    backup = build_cli(create_host(env={})).get_command(click.Context(click.Group()), "backup")
    real = getattr(backup, "real", None)
    backup = real() if callable(real) else backup
    assert backup is not None and "vaults/<vault id>/backups" in " ".join(
        (backup.help or "", *(getattr(p, "help", "") or "" for p in backup.params)))
    assert "~/.local/state/echo-memory" in README


def test_readme_and_help_list_every_exit_code() -> None:
    stated = README[README.index("Exit codes:"):].split("\n\n")[0]
    help_text = build_cli(create_host(env={})).help or ""
    for code in ExitCode:
        assert re.search(rf"\b{int(code)} ", stated), f"README omits exit code {int(code)}"
        assert re.search(rf"\b{int(code)} ", help_text), f"--help omits exit code {int(code)}"


def every_command(group: click.Group, ctx: click.Context) -> list[tuple[str, click.Command]]:
    """(path, command) of every command and group below ``group``, the built ones."""
    found: list[tuple[str, click.Command]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        real = getattr(command, "real", None)
        command = real() if callable(real) else command
        found.append((name, command))
        if isinstance(command, click.Group):
            found += [(f"{name} {sub}", c) for sub, c in every_command(command, ctx)]
    return found


def test_every_command_and_group_takes_json_as_the_readme_says() -> None:
    cli = build_cli(create_host(env={}))
    with click.Context(cli) as ctx:
        commands = every_command(cli, ctx)
    assert {"scope", "scope show", "triage", "triage list"} <= {path for path, _ in commands}
    for path, command in commands:
        options = {opt for p in command.params for opt in getattr(p, "opts", ())}
        assert "--json" in options, f"`echo-memory {path}` has no --json"


def test_help_start_here_names_the_core_loop() -> None:
    help_text = build_cli(create_host(env={})).help or ""
    start = help_text.split("Start here:")[1].split("\n\n")[0]
    for verb in ("init", "capture", "recall", "load", "doctor"):
        assert f"echo-memory {verb}" in start


def test_readme_operation_example_is_a_working_plugin(tmp_path: Path) -> None:
    source = blocks("python")[0]
    namespace: dict[str, object] = {}
    exec(compile(source, "README-example", "exec"), namespace)  # noqa: S102 - our README
    module = type(sys)("readme_word_count")
    module.__dict__.update(namespace)
    host = create_host(env={"ECHO_PLUGIN_DISTS": "echo-memory"},
                       extra=[("readme_word_count", module)])
    registry = OperationRegistry.from_host(host)
    assert "word-count" in {getattr(op, "name", None) for op in registry.for_cli()}
    assert "word-count" in {op.name for op in registry.for_mcp()}
    vault = tmp_path / "vault"
    ctx = create_context(vault=str(vault), state_dir=str(tmp_path / "state"), host=host,
                         env=isolated_env(tmp_path / "home"))
    invoke(ctx, "init", {})
    invoke(ctx, "put", {"path": "notes/a.md", "text": "# A\n\none two three\n"})
    envelope = invoke(ctx, "word-count", {"path": "notes/a.md"})
    assert envelope.ok and envelope.message == "5 words"


def test_readme_contract_example_runs_against_a_real_storage_and_ranker(tmp_path: Path) -> None:
    (tmp_path / "my_plugin.py").write_text(
        "from plugins.storage_fs.folder_storage import FolderStorage as MyStorage\n"
        "from plugins.recall_bm25 import bm25_factory as MyRanker\n")
    (tmp_path / "test_my_storage.py").write_text(blocks("python")[1])
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", str(tmp_path / "test_my_storage.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"\d+ passed", done.stdout)


def test_messages_name_only_verbs_that_exist() -> None:
    """Every `echo-memory <verb>` a message, help text or the README names is a command."""
    cli = build_cli(create_host(env={}))
    with click.Context(cli) as ctx:
        known = {path.split()[0] for path, _ in every_command(cli, ctx)}
    texts = [README] + [p.read_text("utf-8") for folder in ("echo_core", "plugins")
                        for p in (ROOT / folder).rglob("*.py")]
    named = {m for text in texts for m in re.findall(r"`echo-memory ([a-z][a-z-]*)", text)}
    assert named - known == set(), textwrap.shorten(str(sorted(named - known)), 300)
    assert not any("`echo-memory` list" in text for text in texts)


def test_every_help_fits_80_columns() -> None:
    """`load --help` ran past 80 columns (issue 13, item 20): no line of any help does."""
    cli = build_cli(create_host(env={}))
    with click.Context(cli, terminal_width=80, max_content_width=80) as ctx:
        commands = [("", cli), *every_command(cli, ctx)]
        for path, command in commands:
            with click.Context(command, info_name=path or "echo-memory", parent=ctx,
                               terminal_width=80, max_content_width=80) as sub:
                wide = [line for line in command.get_help(sub).splitlines() if len(line) > 80]
            assert not wide, f"`echo-memory {path} --help` is wider than 80: {wide}"
