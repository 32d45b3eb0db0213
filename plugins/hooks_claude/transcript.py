"""A defensive reader of Claude Code transcripts (JSONL, one object per line).

The format is internal to Claude Code and may change, so every line is optional: a line
that is not JSON, not an object, or of a type we do not know is skipped, never an error.
What we read:

* ``timestamp`` of the first line that has one (ISO 8601, usually UTC with ``Z``): when the
  session began.
* ``assistant`` lines: ``message.content`` blocks of type ``tool_use`` (counted once per
  ``id``); ``Edit`` / ``Write`` / ``MultiEdit`` / ``NotebookEdit`` are edits, their
  ``file_path`` / ``notebook_path`` the files edited.
* ``user`` lines that are real prompts: not ``isMeta``, not ``isSidechain``, text content
  (a string or ``text`` blocks; ``tool_result`` blocks are not prompts), and not a
  slash-command wrapper or interruption notice (text starting with ``<`` or ``[``).
* whether the session already saved to memory (``saved``): a Bash tool use running an
  echo-memory write (``capture`` without ``--dry-run``, ``session-end ... --apply``,
  ``reflect ... --apply``; never one asking for help, ``--help`` / ``-h``, which writes
  nothing) or an MCP tool call of ``echo_capture`` (not with ``dry_run`` true), or of
  ``echo_log_session`` / ``echo_reflect`` with ``apply`` true. The command line is read
  as a shell would (``shlex``): split into commands at ``&&``, ``||``, ``;``, ``|``,
  ``&`` and newlines; a command writes only when its program is ``echo-memory`` (after
  ``VAR=value`` words and wrappers such as ``env``, ``time``, ``uv run``) and its options,
  not the text of a quoted value, say so (``echo "run echo-memory capture X"`` saves
  nothing; ``capture X --body "try --dry-run"`` does).

Only a regular file is read (``read_transcript``): a FIFO, a device or a socket at the
path would block the hook or never end, so it counts as no transcript.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shlex
import stat
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})

#: The project's console scripts (pyproject's ``[project.scripts]``; a test keeps them equal).
PROGRAMS = frozenset({"echo-memory"})
#: Options of ``echo-memory`` and its writing verbs that take a value: the word after one
#: is its value (``--body "--dry-run"`` is a text, not the flag), never the verb or a flag.
_VALUE_OPTIONS = frozenset({
    "--vault", "--state-dir", "-k", "--kind", "-b", "--body", "--tags", "--aliases",
    "--sources", "--status", "--date", "--domain", "--merge-into", "--supersedes", "--ttl",
    "--expires", "--transcript",
})
#: Options that make any echo-memory command print its help and write nothing.
_HELP_OPTIONS = frozenset({"--help", "-h"})
#: Characters shlex returns as words of their own (operators); of those, the words that
#: start with one of ``_SEPARATOR_STARTS`` end a command (``>&`` is a redirection).
_OPERATOR_CHARS = ";&|()<>\n"
_SEPARATOR_STARTS = (";", "&", "|", "\n")
#: Words that run the command after them (their own ``-options`` are skipped too).
_PREFIX_WORDS = frozenset({
    "env", "command", "exec", "nohup", "time", "sudo", "uvx", "timeout",
    "if", "then", "elif", "else", "while", "until", "do", "!", "{", "(",
})
#: Runners that take a ``run`` word before the program (``uv run echo-memory ...``).
_RUNNERS = frozenset({"uv", "pipx", "poetry", "pdm", "hatch"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_DURATION = re.compile(r"^\d+(\.\d+)?[smhd]?$")  # timeout's first argument
_SAVE_TOOL_UNLESS_DRY_RUN = "echo_capture"
_SAVE_TOOLS_WITH_APPLY = ("echo_log_session", "echo_reflect")

PROMPT_MAX_CHARS = 200


@attrs.frozen
class TranscriptSummary:
    """What the hooks need to know about one session's transcript."""

    started_at: float | None = None  # epoch seconds of the first timestamp
    tool_uses: int = 0
    edits: int = 0
    edited_files: tuple[str, ...] = ()  # in order of first edit, without repeats
    prompts: tuple[str, ...] = ()  # one line each, at most PROMPT_MAX_CHARS
    saved: bool = False


def parse_timestamp(value: Any) -> float | None:
    """Epoch seconds of an ISO 8601 timestamp (naive ones are taken as UTC); else None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = _dt.datetime.fromisoformat(value)  # 3.11+ reads a trailing Z
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.UTC)
    return moment.timestamp()


def one_line(text: str, limit: int = PROMPT_MAX_CHARS) -> str:
    """``text`` with whitespace collapsed, cut to ``limit`` characters (marked with …)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def is_save_command(command: str) -> bool:
    """Whether a shell command line runs an echo-memory write (see the module docstring):
    a help (``--help``, ``-h``) or dry-run invocation is not one."""
    if not any(program in command for program in PROGRAMS):  # most lines: no parsing
        return False
    return any(_writes(args) for args in map(_echo_memory_args, _commands(command))
               if args is not None)


def _commands(command: str) -> list[list[str]]:
    """The words of each command of a shell line, split at the separators. A line shlex
    cannot read whole (an unclosed quote, e.g. an apostrophe in a here-document) is read
    line by line, each line up to where it fails."""
    text = command.replace("\\\n", " ")  # line continuations
    words, whole = _shell_words(text)
    if not whole:
        words = [word for line in text.splitlines()
                 for word in (*_shell_words(line)[0], "\n")]
    commands: list[list[str]] = [[]]
    for word in words:
        if word and word.startswith(_SEPARATOR_STARTS) and not word.strip(_OPERATOR_CHARS):
            commands.append([])
        else:
            commands[-1].append(word)
    return commands


def _shell_words(text: str) -> tuple[list[str], bool]:
    """``text``'s words (shell operators as words of their own, quotes removed), and
    whether it was read to the end (else the words before the failure)."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=_OPERATOR_CHARS)
    lexer.whitespace = " \t\r"  # a newline ends a command: an operator here
    lexer.whitespace_split = True
    lexer.commenters = ""  # only a command's first words are looked at
    words: list[str] = []
    try:
        words.extend(lexer)
    except ValueError:  # no closing quotation, or an escape at the end
        return words, False
    return words, True


def _echo_memory_args(words: list[str]) -> list[str] | None:
    """The arguments after the program when a command's program is echo-memory, else
    None. ``VAR=value`` words, wrappers and their options before it are skipped."""
    rest = iter(words)
    for word in rest:
        if word.rsplit("/", 1)[-1].removesuffix(".exe") in PROGRAMS:
            return list(rest)
        if word in _RUNNERS:
            if next(rest, None) != "run":
                return None
        elif word in _PREFIX_WORDS or _ASSIGNMENT.match(word):
            continue
        elif not (word.startswith("-") or _DURATION.match(word)):
            return None
    return None


def _writes(args: list[str]) -> bool:
    """Whether ``echo-memory ARGS`` writes: its verb (the first word that is neither an
    option nor an option's value) and its flags decide."""
    verb: str | None = None
    flags: set[str] = set()
    options_end = False
    rest = iter(args)
    for word in rest:
        if options_end or not word.startswith("-") or word == "-":
            verb = word if verb is None else verb
        elif word == "--":
            options_end = True
        elif word in _VALUE_OPTIONS:
            next(rest, None)
        else:
            flags.add(word)
    if verb is None or not _HELP_OPTIONS.isdisjoint(flags):
        return False
    if verb == "capture":
        return "--dry-run" not in flags
    return verb in ("session-end", "reflect") and "--apply" in flags


def is_save_tool(name: str, tool_input: Mapping[str, Any]) -> bool:
    """Whether a tool call saves to echo-memory (Bash running a write, or an MCP write:
    ``mcp__<server>__<tool>``)."""
    if name == "Bash":
        command = tool_input.get("command")
        return isinstance(command, str) and is_save_command(command)
    tool = name.rsplit("__", 1)[-1]
    if tool == _SAVE_TOOL_UNLESS_DRY_RUN:
        return tool_input.get("dry_run") is not True
    return tool in _SAVE_TOOLS_WITH_APPLY and tool_input.get("apply") is True


def _prompt_text(content: Any) -> str | None:
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = [str(b["text"]) for b in content
                 if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
        if not parts or any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        text = "\n".join(parts)
    else:
        return None
    text = text.strip()
    if not text or text[0] in "<[":
        return None
    return _prompt_line(text)


#: How much of a long prompt is redacted before it is cut to one line.
_REDACT_WINDOW = 65_536


def _prompt_line(text: str) -> str:
    """``one_line(text)``; a prompt too long for the line is redacted BEFORE the cut (a
    cut through a secret would leave a fragment no rule matches; the checkpoint's capture
    redacts the whole line again)."""
    flat = " ".join(text.split())
    if len(flat) > PROMPT_MAX_CHARS:
        from echo_core import redact

        flat = redact(flat[:_REDACT_WINDOW]).text
    return one_line(flat)


def _objects(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield obj


def summarize(lines: Iterable[str]) -> TranscriptSummary:
    """Summarize transcript ``lines`` (see the module docstring); never raises on content."""
    started: float | None = None
    seen_ids: set[str] = set()
    tool_uses = edits = 0
    files: dict[str, None] = {}
    prompts: list[str] = []
    saved = False
    for obj in _objects(lines):
        if started is None:
            started = parse_timestamp(obj.get("timestamp"))
        message = obj.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        kind = obj.get("type")
        if kind == "user" and not obj.get("isMeta") and not obj.get("isSidechain"):
            prompt = _prompt_text(content)
            if prompt:
                prompts.append(prompt)
        if kind != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            block_id = block.get("id")
            if isinstance(block_id, str):
                if block_id in seen_ids:
                    continue
                seen_ids.add(block_id)
            name = block.get("name")
            tool_input = block.get("input")
            name = name if isinstance(name, str) else ""
            tool_input = tool_input if isinstance(tool_input, dict) else {}
            tool_uses += 1
            if name in EDIT_TOOLS:
                edits += 1
                path = tool_input.get("file_path") or tool_input.get("notebook_path")
                if isinstance(path, str) and path:
                    files.setdefault(path, None)
            saved = saved or is_save_tool(name, tool_input)
    return TranscriptSummary(started, tool_uses, edits, tuple(files), tuple(prompts), saved)


def read_transcript(path: Any) -> TranscriptSummary:
    """Summarize the transcript file at ``path``; an empty summary, at once, when ``path``
    is not a string or not a regular file (missing, a folder, a FIFO, a device: opening
    or reading those could block until the hook's budget runs out) or cannot be read."""
    if not isinstance(path, str) or not path:
        return TranscriptSummary()
    try:
        # non-blocking, so opening a FIFO returns at once; the type is checked on the open
        # descriptor (no window for a swap between a check and the open)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return TranscriptSummary()
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return TranscriptSummary()
        with open(fd, encoding="utf-8", errors="replace", closefd=False) as handle:
            return summarize(handle)
    except OSError:
        return TranscriptSummary()
    finally:
        os.close(fd)
