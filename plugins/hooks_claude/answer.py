"""``echo-memory hook EVENT`` without click: the CLI runs that exact command line
directly (``run_direct``), the ``hook`` click command calls the same function."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from echo_core import CliState

__all__ = ["answer_event", "is_direct_hook_line"]


def is_direct_hook_line(argv: tuple[str, ...] | list[str]) -> bool:
    """``hook EVENT`` exactly, EVENT a word (no option, no help: those go to click)."""
    return (len(argv) == 2 and argv[0] == "hook" and bool(argv[1])
            and not argv[1].startswith("-"))


def answer_event(event: str, state: CliState) -> None:
    """What ``echo-memory hook EVENT`` does, with or without click around it (the CLI
    runs ``hook EVENT`` directly: ``plugins.hooks_claude.run_direct``): answer from
    stdin, print the reply, run the after-answer work."""
    from plugins.hooks_claude.after_answer import finish
    from plugins.hooks_claude.runner import answer_hook, write_stdout

    text, later = answer_hook(event, state.context, getattr(sys.stdin, "buffer", None),
                              os.environ)
    if text:
        write_stdout(text)
    if later:
        finish(later, background=_own_process())


def _own_process() -> bool:
    """Whether this is a hook process of its own (its stdout a real file or pipe), whose
    after-answer work may go to a detached process; not when run inside another program
    (a test runner capturing output), where it runs before returning."""
    try:
        sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True
