"""The habitat's part of the ``claude-code`` build target: the hook recorder.

``HabitatHooksPart.contribute`` copies the recorder (``hook_record_run.py`` and the
standard-library modules it imports, ``RECORDER_FILES``) from the installed package into
``scripts/habitat/`` of the plugin, byte for byte. ``hook_groups()`` is what it adds to
``hooks/hooks.json``, which the ``hooks_claude`` part writes (it merges the groups every
part of the target offers): one command hook per recorded event (``EVENTS``), all
tools and every session source, beside echo-memory's own hooks (Claude Code runs the
hooks of one event in parallel).

The command: ``"${ECHO_HABITAT_PYTHON:-python3}" -S -E
"${CLAUDE_PLUGIN_ROOT}/scripts/habitat/hook_record_run.py" <Event> || true``. Any
Python >= 3.8 on PATH runs it (>= 3.11 when a config file must be parsed); set
``ECHO_HABITAT_PYTHON`` (e.g. in Claude Code's settings ``env``) to pick one. ``-S``
skips site-packages (their start-up hooks cost ~10 ms), ``-E`` ignores ``PYTHON*``
variables; ``|| true`` keeps the hook harmless even when no Python is found.
"""

from __future__ import annotations

import shutil
from importlib.resources import files
from pathlib import Path
from typing import Any

__all__ = ["CORE_FILES", "EVENTS", "RECORDER_FILES", "SCRIPTS_DIR", "HabitatHooksPart", "hook_command"]

#: The recorder and every module it imports (all standard library only).
RECORDER_FILES = ("hook_record_run.py", "hook_record.py", "hook_record_paths.py",
                  "hook_record_redact.py", "hook_record_json.py", "hook_record_sre.py",
                  "loom_file.py")
#: Files of echo_core the recorder imports (standard library only, imported nothing else).
CORE_FILES = ("pg_identity.py",)
SCRIPTS_DIR = "scripts/habitat"
PYTHON_ENV = "ECHO_HABITAT_PYTHON"
#: (event, matcher, timeout seconds): what hooks.json gets. A matcher of ``*`` takes every
#: tool; SessionStart takes no matcher (every source, resume included). The recorder
#: takes a few ms; the timeout only bounds a stuck disk.
EVENTS: tuple[tuple[str, str | None, int], ...] = (
    ("SessionStart", None, 5),
    ("UserPromptSubmit", None, 5),
    ("PreToolUse", "*", 5),
    ("PostToolUse", "*", 5),
    ("PostToolUseFailure", "*", 5),
    ("Stop", None, 5),
    ("SessionEnd", None, 5),
)


def hook_command(event: str) -> str:
    """The shell command Claude Code runs for ``event`` (see the module docstring)."""
    return (f'"${{{PYTHON_ENV}:-python3}}" -S -E '
            f'"${{CLAUDE_PLUGIN_ROOT}}/{SCRIPTS_DIR}/hook_record_run.py" {event} || true')


class HabitatHooksPart:
    """``BuildTarget`` registered as ``claude-code:habitat`` (the module docstring)."""

    def hook_groups(self) -> dict[str, list[dict[str, Any]]]:
        """``{event: [group]}`` for hooks/hooks.json, in the order of ``EVENTS``."""
        out: dict[str, list[dict[str, Any]]] = {}
        for event, matcher, timeout in EVENTS:
            group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
            group["hooks"] = [{"type": "command", "command": hook_command(event),
                               "timeout": timeout}]
            out[event] = [group]
        return out

    def contribute(self, out_dir: str, context: Any) -> list[str]:
        """Copy ``RECORDER_FILES`` and ``CORE_FILES`` into ``scripts/habitat/``; their
        relative paths."""
        target = Path(out_dir) / SCRIPTS_DIR
        target.mkdir(parents=True, exist_ok=True)
        written = []
        for package, names in (("plugins.habitat", RECORDER_FILES), ("echo_core", CORE_FILES)):
            source = files(package)
            for name in names:
                with source.joinpath(name).open("rb") as src, open(target / name, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                written.append(f"{SCRIPTS_DIR}/{name}")
        return written
