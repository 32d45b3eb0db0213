"""``build``: generate an artefact such as a Claude Code plugin from the installed plugins."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from echo_core import EchoError
from plugins.transport_cli.app_state import AppState
from plugins.transport_cli.cli_kit import common_options, emit

if TYPE_CHECKING:
    from echo_core import Envelope

#: The console script the generated Claude Code hooks and skills call.
EXECUTABLE = "echo-memory"


def _render(env: Envelope[Any]) -> str:
    data = env.data
    lines = [env.message]
    lines += [f"  {path}" for path in data.files]
    if data.target == "claude-code":
        lines.append(f"Try it: claude --plugin-dir {data.out_dir}")
    return "\n".join(lines)


@click.command("build")
@click.argument("target", metavar="TARGET")
@click.argument("out_dir", metavar="DIR", type=click.Path(file_okay=False))
@common_options
def build_command(target: str, out_dir: str, as_json: bool) -> None:
    """Write the TARGET artefact into DIR, generated from the installed plugins.

    \b
    Targets:
      claude-code   a Claude Code plugin: .claude-plugin/plugin.json,
                    hooks/hooks.json (SessionStart, UserPromptSubmit, Stop,
                    PreCompact), .mcp.json and skills/<verb>/SKILL.md (load, save,
                    recall, reflect, triage, health, sweep, doctor)

    \b
    Example:
      echo-memory build claude-code ~/claude-plugins/echo-memory
      claude --plugin-dir ~/claude-plugins/echo-memory

    The README shows how to install it for good from a local marketplace.

    DIR must be new, empty, or an earlier build of the same target (it is then replaced
    whole). The hooks run `echo-memory` from PATH; set ECHO_MEMORY_BIN in Claude Code's
    settings env when it is elsewhere. No vault is needed to build.
    """
    import shutil

    import attrs

    from echo_core import build

    state = click.get_current_context().find_object(AppState)
    if state is None:
        raise EchoError("no echo-memory app state; run commands through `echo-memory`")
    envelope = build(state.host, target, out_dir)
    if target == "claude-code" and shutil.which(EXECUTABLE) is None:
        warning = (f"`{EXECUTABLE}` is not on PATH: the generated hooks will do nothing until "
                   "it is, or until ECHO_MEMORY_BIN names it in Claude Code's settings env")
        envelope = attrs.evolve(envelope, warnings=(*envelope.warnings, warning))
    emit(envelope, as_json, _render)


def add_to(cli: click.Group) -> None:
    """Attach this module's commands to ``cli``."""
    cli.add_command(build_command)
