"""``plugins``: the CLI's view of the plugin host (works even with a broken config)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from plugins.transport_cli.app_state import AppState
from plugins.transport_cli.cli_kit import common_options, emit

if TYPE_CHECKING:
    from echo_core import Envelope


def _render_plugins(env: Envelope[Any]) -> str:
    lines = []
    for rec in env.data.plugins:
        head = f"{rec.name} {rec.version}".strip()
        if rec.status == "ok":
            lines.append(f"{head}  [{rec.source}]  hooks: {', '.join(rec.hooks) or '-'}")
        elif rec.status == "disabled":
            lines.append(f"{head}  DISABLED")
        else:
            lines.append(f"{head}  FAILED: {rec.error}")
    for problem in env.data.problems:
        lines.append(f"PROBLEM: {problem.message}")
    lines.append(f"{len(env.data.problems)} registration problem(s)" if env.data.problems
                 else env.message)
    return "\n".join(lines)


@click.command("plugins")
@common_options
def plugins_command(as_json: bool) -> None:
    """List plugins: name, version, hooks implemented, and status or error.

    Also checks every registration: exits 1 when a name (ranker, storage scheme, command,
    MCP tool...) is taken by two plugins or is malformed, naming the plugins; --json adds
    a `problems` list. A plugin that failed to load is shown with its error and skipped;
    set ECHO_STRICT_PLUGINS=1 to make such a failure fatal, ECHO_DISABLE_PLUGINS=a,b to
    skip some, ECHO_PLUGIN_DISTS=echo-memory,other-dist to load only the plugins of the
    distributions listed, ECHO_TRACE_PLUGINS=1 to trace every hook call on stderr.
    The installed plugins are found once per environment and remembered under
    ~/.cache/echo-memory (any install or uninstall is noticed); ECHO_PLUGIN_CACHE=off
    looks through every installed distribution on each start instead.
    """
    from echo_core import list_plugins

    state = click.get_current_context().find_object(AppState)
    assert state is not None
    emit(list_plugins(state.host), as_json, _render_plugins)


def add_to(cli: click.Group) -> None:
    """Attach this module's commands to ``cli``."""
    cli.add_command(plugins_command)
