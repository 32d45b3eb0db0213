"""hooks_claude's part of the ``claude-code`` build target: the plugin manifest and hooks.

Writes, under the output folder:

* ``.claude-plugin/plugin.json`` — ``name`` ``echo-memory`` (kebab-case), ``version`` (the
  installed distribution's, or the build context's), description, author, license, keywords. This
  part owns the manifest because the Claude Code plugin *is* this plugin's artefact; the
  other parts (skills, later ``.mcp.json``) only add component folders.
* ``hooks/hooks.json`` — one command hook per event of ``events.EVENTS`` with its
  ``timeout`` (SessionStart with its matcher ``startup|clear|compact``), then the hook
  groups other parts of the target offer (``offered_hook_groups``: e.g. the habitat's
  recorder).

How a hook finds the executable: the command is ``"${ECHO_MEMORY_BIN:-echo-memory}" hook
<Event> || true``. It runs the ``echo-memory`` console script found on PATH (the installed
package, nothing from a source tree or from ``${CLAUDE_PLUGIN_ROOT}``); set
``ECHO_MEMORY_BIN`` (e.g. in Claude Code's settings ``env``) to an absolute path when the
script is not on PATH. ``|| true`` keeps the hook fail-safe even when the executable is
missing or too old to know ``hook``: exit 2 would otherwise *block* Stop, PreCompact and
UserPromptSubmit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plugins.hooks_claude.events import BIN_ENV, EVENTS

PLUGIN_NAME = "echo-memory"
DESCRIPTION = ("Persistent memory for Claude Code, kept as plain markdown notes in an "
               "Obsidian-compatible vault: a brief at session start, relevant notes on each "
               "prompt, a reminder to save what was learned, checkpoints before compaction.")
KEYWORDS = ("memory", "notes", "markdown", "obsidian", "recall")
MANIFEST_PATH = ".claude-plugin/plugin.json"
HOOKS_PATH = "hooks/hooks.json"


def hook_command(event: str) -> str:
    """The shell command Claude Code runs for ``event`` (see the module docstring)."""
    return f'"${{{BIN_ENV}:-echo-memory}}" hook {event} || true'


def hooks_document(extra: Mapping[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The hooks/hooks.json object: ``{"hooks": {Event: [{matcher?, hooks: [...]}]}}``;
    ``extra``'s groups (other parts', ``offered_hook_groups``) follow echo-memory's own."""
    hooks: dict[str, Any] = {}
    for event in EVENTS.values():
        group: dict[str, Any] = {}
        if event.matcher is not None:
            group["matcher"] = event.matcher
        group["hooks"] = [{"type": "command", "command": hook_command(event.name),
                           "timeout": event.timeout}]
        hooks[event.name] = [group]
    for name, groups in (extra or {}).items():
        hooks.setdefault(name, []).extend(groups)
    return {"hooks": hooks}


def offered_hook_groups(context: Any) -> dict[str, list[dict[str, Any]]]:
    """The hook groups the target's other parts offer: a part with a ``hook_groups()``
    method (``{Event: [group]}``) gets them into the one hooks/hooks.json this part
    writes, in part-name order (a plugin cannot write that file itself: two parts may
    not write the same file)."""
    host = getattr(context, "host", None)
    target = getattr(context, "target", "claude-code")
    if host is None:
        return {}
    merged: dict[str, list[dict[str, Any]]] = {}
    registered = host.collect("register_build_targets")
    for name in sorted(registered):
        offer = getattr(registered[name], "hook_groups", None)
        if name.split(":", 1)[0] == target and callable(offer):
            for event, groups in offer().items():
                merged.setdefault(event, []).extend(groups)
    return merged


#: The plugin's author, as the distribution declares it (pyproject ``authors``).
AUTHOR = {"name": "echo-memory developers"}


def installed_version() -> str:
    """The installed ``echo-memory`` version (``0.0.0`` when not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("echo-memory")
    except PackageNotFoundError:
        return "0.0.0"


def manifest_document(version: str) -> dict[str, Any]:
    """The .claude-plugin/plugin.json object (``claude plugin validate --strict`` wants an
    ``author``)."""
    return {"name": PLUGIN_NAME, "version": version, "description": DESCRIPTION,
            "author": dict(AUTHOR), "license": "MIT", "keywords": list(KEYWORDS)}


def _write_json(root: Path, rel: str, data: Any) -> str:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8",
                    newline="\n")
    return rel


class ClaudeHooksPart:
    """``BuildTarget`` registered as ``claude-code:hooks_claude``.

    ``contribute(out_dir, context)`` writes the two files above and returns their relative
    paths. ``context`` may carry ``version`` (a string); otherwise the installed version is
    used. Deterministic: the same inputs give the same bytes.
    """

    def contribute(self, out_dir: str, context: Any) -> list[str]:
        version = getattr(context, "version", None)
        if not isinstance(version, str) or not version:
            version = installed_version()
        root = Path(out_dir)
        return [_write_json(root, MANIFEST_PATH, manifest_document(version)),
                _write_json(root, HOOKS_PATH, hooks_document(offered_hook_groups(context)))]
