"""The click CLI: the root group with every plugin's commands (raw ones from
``register_commands``, and one derived per registered operation), its help text.
Imported only by a command line that goes through click (``app._run_click``).
"""

from __future__ import annotations

from typing import Any

import click

from echo_core import EchoError, ExitCode, PluginHost
from plugins.transport_cli.cli_kit import ensure_common_options
from plugins.transport_cli.crash_guard import guard_text_arguments
from plugins.transport_cli.help_text import HELP, help_width
from plugins.transport_cli.interrupt import Interrupted

__all__ = ["HELP", "EchoGroup", "build_cli", "help_width"]


class EchoGroup(click.Group):
    """A click group that lists commands in the order plugins added them, and lets a
    Ctrl-C out of a command as ``Interrupted`` (``interrupt``: click's ``main`` would
    print a blank line and raise ``Abort``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as stop:
            raise Interrupted from stop


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


