"""``flush``: replay writes queued while the vault was unreachable."""

from __future__ import annotations

import click

from echo_core.cli_kit import common_options, current_context, emit
from echo_core.models import Envelope


def _render(env: Envelope) -> str:
    lines = [env.message]
    for item in env.data.items:
        if item.outcome != "synced":
            lines.append(f"  {item.outcome}: {item.op} {item.id}  {item.detail}")
    return "\n".join(lines)


@click.command("flush")
@common_options
def flush_command(as_json: bool) -> None:
    """Replay the offline outbox: writes queued while the vault was unreachable.

    Each queued capture runs through capture again (routing and the duplicate gate see
    the vault as it is now). A capture the gate stops is kept and flagged "needs
    attention" (re-capture it with --merge-into or --force); later ones still land.
    `load` flushes automatically.
    """
    from echo_core.ops.outbox import flush

    emit(flush(current_context()), as_json, _render)


def add_to(cli: click.Group) -> None:
    """Attach this module's commands to ``cli``."""
    cli.add_command(flush_command)
