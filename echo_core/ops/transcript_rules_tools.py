"""The error-then-fix rule of transcript mining: tool calls and their results.

A tool call is identified by its tool ``name`` and a ``target``:

- ``Bash``: the command head - leading ``cd DIR &&``, ``VAR=value`` and ``sudo``
  dropped, then the program plus its sub-command when the second word is a plain
  word (``git commit``, ``npm test``), or ``python -m MODULE``;
- file tools: ``file_path`` / ``notebook_path`` / ``path`` (relative to the session's
  ``cwd`` when under it); web tools: ``url``;
- a call without a target is never paired.

``ErrorFixTracker`` follows a transcript in order: a ``tool_result`` with
``is_error`` true (not an operator's refusal or an interruption) opens a failure for
``(name, target)``; the next successful result for the same pair whose input differs
from the failed call's closes it and yields an ``ErrorFix`` (what failed, the error's
first line, what worked, up to three tool calls made in between; every text redacted
before it is shortened). An identical retry that succeeds is a lesson only for a
non-shell tool with calls in between (``Edit`` failed "not read yet", ``Read``, the same
``Edit`` worked); an identical shell command that passes later means the code was fixed,
not the call, and closes the failure silently.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from echo_core.ops.transcript_parse import ToolUse, TranscriptTurn
from echo_core.redaction import redact

__all__ = ["ErrorFix", "ErrorFixTracker", "command_head", "describe_call", "tool_target"]

_SHORT = 120
_BETWEEN = 3
_ARG, _ARGS = 40, 3
#: Arguments holding file content: never quoted in a description.
_CONTENT_KEYS = frozenset({"content", "old_string", "new_string", "edits", "new_source"})
_REFUSALS = ("the user doesn't want to proceed", "[request interrupted",
             "user rejected", "the user denied")
_PLAIN_WORD = re.compile(r"[a-z][a-z0-9_-]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_FILE_KEYS = ("file_path", "notebook_path", "path")
_TOOL_ERROR_TAG = re.compile(r"</?tool_use_error>")


@attrs.frozen
class ErrorFix:
    """A failed call and the later call on the same tool and target that worked."""

    tool: str
    target: str
    failed: str        # the failed call, shortened
    error: str         # the error's first line, shortened
    worked: str        # the successful call, shortened (with the arguments that changed)
    between: tuple[str, ...]  # up to three calls made in between
    same_call: bool    # the call that worked is the failed one, retried after ``between``
    failed_turn: TranscriptTurn
    fixed_turn: TranscriptTurn


def _short(text: str, limit: int = _SHORT) -> str:
    """``text`` redacted (before it is cut, so no secret is left half-matched), on one
    line, at most ``limit`` characters."""
    line = " ".join(redact(text).text.split())
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


def command_head(command: str) -> str:
    """The head of a shell ``command`` (see the module docstring); ``""`` if none."""
    first = re.split(r"\s*(?:&&|\|\||;|\|)\s*", command.strip(), maxsplit=0)
    parts = [p for p in first if p and not p.startswith("cd ")]
    words = (parts[0] if parts else "").split()
    while words and (_ASSIGNMENT.fullmatch(words[0]) or words[0] in ("sudo", "env", "time")):
        words = words[1:]
    if not words:
        return ""
    program = posixpath.basename(words[0])
    if len(words) >= 3 and words[1] == "-m":
        return f"{program} -m {words[2]}"
    if len(words) >= 2 and _PLAIN_WORD.fullmatch(words[1]):
        return f"{program} {words[1]}"
    return program


def _relative(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def tool_target(use: ToolUse, cwd: str | None = None) -> str:
    """The target of ``use`` (see the module docstring), ``""`` when it has none."""
    tool_input = use.input
    command = tool_input.get("command")
    if use.name == "Bash" and isinstance(command, str):
        return command_head(command)
    for key in _FILE_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return _relative(value.strip(), cwd)
    url = tool_input.get("url")
    return url.strip() if isinstance(url, str) else ""


def describe_call(use: ToolUse, cwd: str | None = None,
                  versus: Mapping[str, Any] | None = None) -> str:
    """A short readable form of a call: ``Bash `cmd` `` or ``Edit path``; with
    ``versus`` (another call's input), the short arguments that differ from it are
    added: ``Read src/a.rs (offset=1, limit=200)``."""
    command = use.input.get("command")
    if use.name == "Bash" and isinstance(command, str):
        return f"Bash `{_short(command)}`"
    target = tool_target(use, cwd)
    text = f"{use.name} {_short(target)}" if target else use.name
    if versus is not None:
        changed = [f"{key}={_short(str(value), _ARG)}" for key, value in use.input.items()
                   if key not in _FILE_KEYS and key not in _CONTENT_KEYS
                   and versus.get(key) != value][:_ARGS]
        if changed:
            text += f" ({', '.join(changed)})"
    return text


def _input_key(tool_input: Mapping[str, Any]) -> str:
    try:
        return json.dumps(tool_input, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(sorted(tool_input))


@attrs.define
class _Failure:
    use: ToolUse
    error: str
    turn: TranscriptTurn
    between: list[str] = attrs.field(factory=list)


@attrs.define
class ErrorFixTracker:
    """Follows one transcript's tool calls and results (see the module docstring)."""

    _calls: dict[str, tuple[ToolUse, str | None]] = attrs.field(factory=dict)
    _open: dict[tuple[str, str], _Failure] = attrs.field(factory=dict)

    def saw_calls(self, turn: TranscriptTurn) -> None:
        """Remember ``turn``'s tool calls (an assistant turn) by id."""
        for use in turn.tool_uses:
            self._calls[use.id] = (use, turn.cwd)

    def saw_results(self, turn: TranscriptTurn) -> Iterator[ErrorFix]:
        """Match ``turn``'s tool results to their calls; yield each closed error-fix."""
        for result in turn.tool_results:
            found = self._calls.pop(result.tool_use_id, None)
            if found is None:
                continue
            use, cwd = found
            target = tool_target(use, cwd)
            if not target:
                continue
            pair = (use.name, target)
            if result.is_error:
                if not result.text.strip().lower().startswith(_REFUSALS):
                    self._open[pair] = _Failure(use, _first_line(result.text), turn)
                continue
            failure = self._open.pop(pair, None)
            for other in self._open.values():
                if len(other.between) < _BETWEEN:
                    other.between.append(describe_call(use, cwd))
            if failure is None or not _is_lesson(failure, use):
                continue
            yield ErrorFix(use.name, target, describe_call(failure.use, cwd), failure.error,
                           describe_call(use, cwd, versus=failure.use.input),
                           tuple(failure.between), _same(failure.use, use), failure.turn, turn)


def _same(first: ToolUse, second: ToolUse) -> bool:
    return _input_key(first.input) == _input_key(second.input)


def _is_lesson(failure: _Failure, use: ToolUse) -> bool:
    if not _same(failure.use, use):
        return True
    return use.name != "Bash" and bool(failure.between)


def _first_line(text: str) -> str:
    for line in _TOOL_ERROR_TAG.sub("", redact(text).text).splitlines():
        if line.strip():
            return _short(line.strip())
    return "(no message)"
