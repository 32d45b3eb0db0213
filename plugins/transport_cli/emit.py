"""Printing a result: ``emit(envelope, as_json, render)`` writes prose or JSON to stdout
and exits non-zero when the envelope is not ``ok``. No click here: the direct path
(``direct_ops``) prints through it too, and the click commands get it from ``cli_kit``.

Text is written as ``click.echo`` would write it (a newline, then a flush): prose goes
through ``terminal_safe`` and JSON through ``json_text``, so neither holds a control
character for click to strip. The one exception is a whole note printed exactly
(``get`` piped): its characters alone, so the output is the note byte for byte.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from echo_core import Action, ExitCode, json_text, terminal_safe

if TYPE_CHECKING:
    from echo_core import Envelope

__all__ = ["emit", "stdout_is_terminal", "write_line"]

#: The exit status of a not-ok envelope, by action (any other: 1).
_NOT_OK_EXIT: dict[str, ExitCode] = {Action.DUPLICATE_GATE: ExitCode.DUPLICATE_GATE,
                                     Action.CONTRADICTION: ExitCode.DUPLICATE_GATE,
                                     Action.QUEUED: ExitCode.UNAVAILABLE,
                                     Action.UNREACHABLE: ExitCode.UNAVAILABLE}


def write_line(text: str, *, err: bool = False, end: str = "\n") -> None:
    """``text`` and ``end`` (a newline) on stdout (stderr with ``err``), flushed."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + end)
    stream.flush()


def emit(envelope: Envelope[object], as_json: bool,
         render: Callable[[Envelope[Any]], str] | None = None,
         *, exact_when_piped: bool = False) -> None:
    """Print ``envelope`` as JSON or prose and exit non-zero when it is not ``ok``.

    A ``queued`` envelope (the outbox took the write) prints its message, whatever the
    verb's ``render``. Prose goes through ``terminal_safe``; with ``exact_when_piped``
    (note text for ``get``) it is printed exactly as it is when stdout is not a terminal,
    and a render's ``WholeNoteText`` (a whole note) then without the closing newline.
    A gate stop (a near duplicate, a contradiction) exits 76; a write kept in the outbox
    because the vault folder is missing, or a read of an unreachable vault, 69; any other
    not-ok envelope exits 1.
    """
    if as_json:
        write_line(json_text(envelope.to_dict()))
    else:
        plain = envelope.action in (Action.QUEUED, Action.UNREACHABLE)
        text = render(envelope) if render and not plain else envelope.message
        if text:
            exact = exact_when_piped and not stdout_is_terminal()
            write_line(text if exact else terminal_safe(text),
                       end="" if exact and _whole_note(text) else "\n")
        for warning in envelope.warnings:
            write_line(f"warning: {terminal_safe(warning)}", err=True)
    if not envelope.ok:
        sys.exit(int(_NOT_OK_EXIT.get(envelope.action, ExitCode.FAILURE)))


def _whole_note(text: str) -> bool:
    """Whether a render marked ``text`` as a whole note (a ``str`` whose ``whole_note`` is
    true: the core's ``note_verbs.WholeNoteText``; asked by attribute, as a plugin imports
    only the public core)."""
    return bool(getattr(text, "whole_note", False))


def stdout_is_terminal() -> bool:
    """True when stdout is a terminal."""
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())
