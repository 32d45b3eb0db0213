"""transport_cli: the ``echo-memory`` command line. Adds its own verbs through the same
``register_commands`` hook every other plugin uses."""

from __future__ import annotations

from typing import Any

from echo_core.hookspecs import Register, hookimpl

SKILLS_PART_NAME = "claude-code:transport_cli"


@hookimpl
def register_commands(cli: Any) -> None:
    """Add every built-in verb: vault, capture, entity, recall, scope, session, raw-note,
    history/backup, triage and build verbs."""
    from plugins.transport_cli import (
        build_commands,
        capture_commands,
        entity_commands,
        history_commands,
        note_commands,
        outbox_commands,
        recall_commands,
        scope_commands,
        session_commands,
        triage_commands,
        vault_commands,
    )

    vault_commands.add_to(cli)
    capture_commands.add_to(cli)
    entity_commands.add_to(cli)
    recall_commands.add_to(cli)
    scope_commands.add_to(cli)
    session_commands.add_to(cli)
    note_commands.add_to(cli)
    history_commands.add_to(cli)
    triage_commands.add_to(cli)
    outbox_commands.add_to(cli)
    build_commands.add_to(cli)


@hookimpl
def register_build_targets(register: Register) -> None:
    """Contribute the skills (one per CLI verb) to the ``claude-code`` target."""
    from plugins.transport_cli.skills import CliSkillsPart

    register(SKILLS_PART_NAME, CliSkillsPart())
