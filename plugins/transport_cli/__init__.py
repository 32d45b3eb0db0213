"""transport_cli: the ``echo-memory`` command line.

Every registered operation becomes a command (``plugins.transport_cli.derived``); the
few verbs that belong to the command line itself (``plugins``, ``build``) come through
the same ``register_commands`` hook every other plugin may use. The skills of the
``claude-code`` build target are derived from the operations too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from echo_core import hookimpl

if TYPE_CHECKING:
    from collections.abc import Sequence

    from echo_core import BuildTarget, CliState, Register

SKILLS_PART_NAME = "claude-code:transport_cli"


@hookimpl
def register_commands(cli: Any) -> None:
    """Add the CLI's own verbs: ``plugins`` and ``build``."""
    from plugins.transport_cli import build_commands, vault_commands

    vault_commands.add_to(cli)
    build_commands.add_to(cli)


@hookimpl(trylast=True)
def run_direct(argv: Sequence[str], state: CliState) -> int | None:
    """An operation's command line in a form parsed exactly as its click command would
    parse it, run without building the click CLI (``direct_ops``); else None. Asked
    last: a plugin's own exact lines (``hook EVENT``) are answered before the operation
    registry is built."""
    from plugins.transport_cli.app_state import AppState
    from plugins.transport_cli.direct_ops import run_line

    return run_line(argv, state if isinstance(state, AppState) else None)


@hookimpl
def register_build_targets(register: Register[BuildTarget]) -> None:
    """Contribute one skill per declared operation skill to the ``claude-code`` target."""
    from plugins.transport_cli.skills import CliSkillsPart

    register(SKILLS_PART_NAME, CliSkillsPart())
