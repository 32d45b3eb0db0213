"""Ctrl-C (SIGINT) on a command: one line on stderr and exit 130, never a traceback.

The interrupt is caught once, at the CLI's entry (``app.main``), after it has run back
through every ``finally`` and ``with`` of the command (locks released, temporary files
removed, a half-made index dropped), so catching it changes what is printed and nothing
else. Inside click, ``EchoGroup.invoke`` carries it past click's ``main`` as
``Interrupted``: click would turn it into ``Abort`` after printing a blank line.

The line is ``interrupted``; for an operation that writes (``Operation.access_for`` of
its parameters, recorded on the ``AppState`` as it starts) it adds that the command is
safe to run again: every write is atomic or finished by the next run. This module
imports no click (the direct path does not load it).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plugins.transport_cli.app_state import AppState

__all__ = ["EXIT_INTERRUPTED", "Interrupted", "interrupted_line", "report_interrupt"]

#: The exit status of a command stopped by SIGINT (128 + 2), as a shell reports it.
EXIT_INTERRUPTED = 130


class Interrupted(BaseException):
    """A ``KeyboardInterrupt`` on its way out of click (the original is its cause).
    A ``BaseException``, as the interrupt is: no ``except Exception`` stops it."""


def interrupted_line(state: AppState | None) -> str:
    """What an interrupted command prints: ``interrupted``, and for an operation that
    was writing, that it is safe to run again."""
    if state is None or not state.running or not state.writes:
        return "interrupted"
    return f"interrupted: {state.running} stopped part-way; it is safe to run it again"


def report_interrupt(state: AppState | None) -> int:
    """Print ``interrupted_line(state)`` on stderr; the exit code (130). A stderr that
    cannot take it (a closed pipe) changes nothing."""
    try:
        print(interrupted_line(state), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
    return EXIT_INTERRUPTED
