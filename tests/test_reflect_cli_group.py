"""A CLI word that is a command and a group (``reflect`` and ``reflect corpus``):
``plugins.transport_cli.default_group``. The first word after the group's options picks
a sub-command by name, anything else runs the default command with every word; help
shows both; the declarations may come in either order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import click
import pytest
from click.testing import CliRunner

from echo_core.models import Envelope
from echo_core.operations import CliArg, CliSurface, Operation, param
from echo_core.plugins import create_host
from plugins.transport_cli.app import build_cli
from plugins.transport_cli.cli_kit import AppState
from plugins.transport_cli.default_group import DefaultCommandGroup
from plugins.transport_cli.derived import add_operations
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main


@attrs.frozen(kw_only=True)
class EchoParams:
    """One flag."""

    loud: bool = param(False, help="Shout.")


def _op(name: str, command: tuple[str, ...], *, file_arg: bool = False) -> Operation[Any]:
    def run(ctx: Any, p: Any) -> Envelope[Any]:
        return Envelope(True, "read", f"{name} ran (loud={p.loud})", {})

    def prepare(values: Any) -> Any:
        out = dict(values)
        out.pop("source", None)
        return out

    extra = (CliArg("source", "A file.", metavar="FILE", required=False),) if file_arg else ()
    return Operation(name, f"The {name} summary.", "Desc.", EchoParams, run,
                     cli=CliSurface(command=command, extra=extra,
                                    prepare=prepare if file_arg else None),
                     needs_vault=False)


@pytest.mark.parametrize("order", ["command-first", "group-first"])
def test_a_command_and_its_sub_commands_make_one_default_group(order: str) -> None:
    default = _op("learn", ("learn",), file_arg=True)
    sub = _op("learn-all", ("learn", "all"))
    entries = [default, sub] if order == "command-first" else [sub, default]
    cli = click.Group("echo-memory")
    added = add_operations(cli, list(entries), lambda name: None)
    assert added == {"learn": "learn", "learn all": "learn-all"}
    group = cli.commands["learn"]
    assert isinstance(group, DefaultCommandGroup)
    assert group.default_command is not None and list(group.commands) == ["all"]
    runner = CliRunner()

    def invoke(*args: str) -> Any:
        return runner.invoke(cli, list(args), obj=AppState(create_host(env={})))

    assert "learn-all ran (loud=True)" in invoke("learn", "all", "--loud").output
    assert "learn ran (loud=True)" in invoke("learn", "notes.json", "--loud").output
    assert "learn ran (loud=False)" in invoke("learn", "./all").output
    assert "learn ran (loud=True)" in invoke("learn", "--loud").output
    assert "learn-all ran" in invoke("learn", "--json", "--vault", "v", "all").output
    assert "learn ran" in invoke("learn", "--vault=v", "file.json").output
    shown = invoke("learn", "--help").output
    assert "Usage: echo-memory learn [OPTIONS] FILE" in shown
    assert "or: echo-memory learn COMMAND [ARGS]..." in shown
    assert "--loud" in shown and "all" in shown.split("Commands:")[1]
    assert "The learn-all summary." in invoke("learn", "all", "--help").output


def test_a_group_without_a_default_behaves_as_a_click_group() -> None:
    cli = click.Group("echo-memory")
    add_operations(cli, [_op("show", ("scope", "show"))], lambda name: None)
    group = cli.commands["scope"]
    assert isinstance(group, DefaultCommandGroup) and group.default_command is None
    result = CliRunner().invoke(cli, ["scope", "nope"], obj=AppState(create_host(env={})))
    assert result.exit_code == 2 and "No such command 'nope'" in result.output


def test_reflect_help_lists_the_default_options_and_the_sub_commands(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    shown = run_main(["reflect", "--help"], capsys, monkeypatch)
    assert shown.code == 0
    assert "Usage: echo-memory reflect [OPTIONS] [PROPOSALS|-]" in shown.out
    assert "--transcript PATH" in shown.out and "--apply" in shown.out
    commands = shown.out.split("Commands:")[1]
    assert "claude-memory" in commands


def test_reflect_is_a_default_group_of_the_real_cli() -> None:
    cli = build_cli(create_host(env={}))
    group = cli.commands["reflect"]
    assert isinstance(group, DefaultCommandGroup)
    assert group.default_command is not None
    assert {"claude-memory"} <= set(group.commands)


def test_reflect_group_options_before_the_file_reach_the_default_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    source = tmp_path / "p.json"
    source.write_text('[{"title": "Use pytest", "kind": "semantic", "body": "Always.", '
                      '"confidence": 0.9}]', encoding="utf-8")
    result = run_main(["reflect", "--json", "--vault", str(box.vault), "--state-dir",
                       str(box.state), str(source)], capsys, monkeypatch)
    assert result.code == 0, result.err
    assert '"classification": "create"' in result.out
