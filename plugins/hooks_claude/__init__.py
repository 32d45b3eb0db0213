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
    from echo_core import BuildTarget

BUILD_PART_NAME = "claude-code:hooks_claude"


@hookimpl
def register_commands(cli: Any) -> None:
    """Add ``echo-memory hook <event>``."""
    from plugins.hooks_claude.command import hook_command

    cli.add_command(hook_command)


@hookimpl
def register_build_targets(register: Register[BuildTarget]) -> None:
    """Register the plugin manifest + hooks part of the ``claude-code`` target."""
    from plugins.hooks_claude.build_part import ClaudeHooksPart

    register(BUILD_PART_NAME, ClaudeHooksPart())
