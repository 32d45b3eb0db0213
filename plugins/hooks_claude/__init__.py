"""hooks_claude: Claude Code integration — the ``echo-memory hook <event>`` command and the
hooks part of the ``claude-code`` build target (SPEC §4.5, §6.3).

* ``register_commands`` adds ``hook`` (``command.py``): fail-safe answers to SessionStart,
  UserPromptSubmit, Stop and PreCompact (``handlers.py``), under a time budget
  (``events.py``, ``runner.py``).
* ``register_build_targets`` registers ``claude-code:hooks_claude`` (``build_part.py``):
  ``.claude-plugin/plugin.json`` and ``hooks/hooks.json``.

Imported at every CLI start-up (including each hook call), so this module imports only
the hookspec markers; everything else is imported when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from echo_core import Register, hookimpl

if TYPE_CHECKING:
    from collections.abc import Sequence

    from echo_core import BuildTarget, CliState

BUILD_PART_NAME = "claude-code:hooks_claude"


@hookimpl
def register_commands(cli: Any) -> None:
    """Add ``echo-memory hook <event>``."""
    from plugins.hooks_claude.command import hook_command

    cli.add_command(hook_command)


@hookimpl
def run_direct(argv: Sequence[str], state: CliState) -> int | None:
    """``hook EVENT`` without the click CLI (every Claude Code hook call: ~10 ms less);
    the same answer as the ``hook`` command, which always exits 0."""
    from plugins.hooks_claude.answer import answer_event, is_direct_hook_line

    if not is_direct_hook_line(list(argv)):
        return None
    answer_event(argv[1], state)
    return 0


@hookimpl
def register_build_targets(register: Register[BuildTarget]) -> None:
    """Register the plugin manifest + hooks part of the ``claude-code`` target."""
    from plugins.hooks_claude.build_part import ClaudeHooksPart

    register(BUILD_PART_NAME, ClaudeHooksPart())
