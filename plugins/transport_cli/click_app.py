"""The click CLI: the root group with every plugin's commands (raw ones from
``register_commands``, and one derived per registered operation), its help text.
Imported only by a command line that goes through click (``app._run_click``).
"""

from __future__ import annotations

import os
import sys

import click

from echo_core import EchoError, ExitCode, PluginHost
from plugins.transport_cli.cli_kit import ensure_common_options
from plugins.transport_cli.crash_guard import guard_text_arguments

__all__ = ["HELP", "EchoGroup", "build_cli", "help_width"]

HELP = """echo-memory: persistent memory for AI agents, kept as plain markdown notes.

\b
Start here:
  echo-memory init --vault ~/notes    create a vault (safe on an existing one)
  echo-memory capture "Ada Lovelace" -k person -b "Wrote the first program."
                                      remember it (duplicates stop at a gate)
  echo-memory recall "first program"  find it again, ranked, with excerpts
  echo-memory load                    the brief an agent reads first
  echo-memory doctor                  check config, vault and plugins

The vault is --vault, else $ECHO_VAULT, else `vault` in ~/.config/echo-memory/config.toml,
else an embedded folder under ~/.local/share/echo-memory/vault. Every command takes
--json (a group's sub-commands too: `scope show --json` or `scope --json show`).
Exit codes: 0 ok, 1 failure, 2 usage, 44 not found, 69 vault unavailable (writes are
queued), 75 lock held, 76 duplicate gate, 78 not configured (or not a vault).
"""


class EchoGroup(click.Group):
    """A click group that lists commands in the order plugins added them."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


def help_width() -> int:
    """The width click would give help text: the terminal's columns (``COLUMNS``, else
    stdout's terminal, else 80), at most 80, minus 2, at least 50. Given to click so its
    formatter need not import ``shutil`` (with zlib, bz2 and lzma) to ask."""
    columns = 0
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        pass
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return max(min(columns or 80, 80) - 2, 50)


def build_cli(host: PluginHost) -> click.Group:
    """The root group with every plugin's commands, each plugin called through pluggy.

    A plugin whose ``register_commands`` raises is failed and blocked. A command name two
    plugins add is reported to the host (``plugins`` and ``doctor`` fail naming both) and
    the command refuses to run; the rest of the CLI works.
    """

    @click.group(cls=EchoGroup, help=HELP, context_settings={
        "help_option_names": ["-h", "--help"], "terminal_width": help_width()})
    @click.version_option(package_name="echo-memory", prog_name="echo-memory")
    def cli() -> None:
        pass

    # Raw commands first: a plugin failing here is blocked before the operations are
    # derived, so none of its verbs reach the CLI.
    raw: list[tuple[str, str, click.Command]] = []
    for plugin_name in host.implementers("register_commands"):
        scratch = click.Group()
        try:
            host.call_plugin("register_commands", plugin_name, cli=scratch)
        except Exception as exc:  # noqa: BLE001 - a broken plugin is failed, not fatal
            host.fail_plugin(plugin_name, exc)
            continue
        raw += [(plugin_name, name, command) for name, command in scratch.commands.items()]
    owners: dict[str, str] = _add_operations(cli, host)
    for plugin_name, name, command in raw:
        if name in owners:
            problem = host.report_duplicate("register_commands", name, owners[name], plugin_name)
            cli.add_command(_refusing_command(name, problem.message), name)
            continue
        owners[name] = plugin_name
        ensure_common_options(command)
        guard_text_arguments(command)
        cli.add_command(command, name)
    return cli


def _add_operations(cli: click.Group, host: PluginHost) -> dict[str, str]:
    """Commands derived from the operation registry; returns command -> owning plugin."""
    from echo_core import OperationRegistry
    from plugins.transport_cli.derived import add_operations

    registry = OperationRegistry.from_host(host)
    added = add_operations(cli, registry.for_cli(), registry.load, guard_text_arguments)
    return {path.split()[0]: registry.owners.get(name, "?") for path, name in added.items()}


def _refusing_command(name: str, message: str) -> click.Command:
    """Stands in for a command two plugins add: running it fails with ``message``."""

    def refuse() -> None:
        raise EchoError(message, ExitCode.FAILURE)

    return click.Command(
        name, callback=refuse, add_help_option=False,
        help=f"Unavailable: {message}", short_help="unavailable: added by two plugins",
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )


