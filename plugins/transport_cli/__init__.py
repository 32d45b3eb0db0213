"""transport_cli: the ``echo-memory`` command line. Adds its own verbs through the same
``register_commands`` hook every other plugin uses."""

from __future__ import annotations

from typing import Any

from echo_core.hookspecs import hookimpl


@hookimpl
def register_commands(cli: Any) -> None:
    """Add every built-in verb: vault, capture, entity, recall, raw-note and triage verbs."""
    from plugins.transport_cli import (
        capture_commands,
        entity_commands,
        note_commands,
        recall_commands,
        scope_commands,
        triage_commands,
        vault_commands,
    )

    vault_commands.add_to(cli)
    capture_commands.add_to(cli)
    entity_commands.add_to(cli)
    recall_commands.add_to(cli)
    scope_commands.add_to(cli)
    note_commands.add_to(cli)
    triage_commands.add_to(cli)
