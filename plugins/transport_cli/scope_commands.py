"""``scope show`` / ``scope set``: the agent's current focus."""

from __future__ import annotations

import click

from echo_core.cli_kit import (
    LiteralArgsCommand,
    common_options,
    current_context,
    emit,
    read_text_source,
)


@click.group("scope")
def scope_group() -> None:
    """Show or set what the agent is working on now (the scope).

    The scope sits in _agent/context/current-context.md; each change keeps the old one,
    dated, under Scope History.
    """


@scope_group.command("show")
@common_options
def scope_show(as_json: bool) -> None:
    """Print the scope, when it was set, and how many sessions were logged since."""
    from echo_core.ops.scope import show_scope

    emit(show_scope(current_context()), as_json)


@scope_group.command("set", cls=LiteralArgsCommand)
@click.argument("text")
@common_options
def scope_set(text: str, as_json: bool) -> None:
    """Replace the scope with TEXT (use - to read it from stdin).

    Example: echo-memory scope set "Ship the recall index; then the MCP server"
    """
    from echo_core.ops.scope import set_scope

    if text == "-":
        text = read_text_source("-", "TEXT (stdin)")
    emit(set_scope(current_context(), text), as_json)


def add_to(cli: click.Group) -> None:
    """Attach this module's commands to ``cli``."""
    cli.add_command(scope_group)
