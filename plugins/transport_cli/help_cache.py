"""``echo-memory --help`` from the page the last identical run printed.

The root help page depends only on the code (every plugin's commands and their help),
the plugins loaded, the interpreter and the width it is wrapped to. Building it means
importing click and deriving every command (~25 ms of a ~50 ms run); the page is kept
with ``echo_core.remember_output`` (keyed by those inputs, checked against every source
file the printing process had loaded) and printed as is while none of it changed.
Only the exact lines ``--help`` and ``-h`` are answered this way.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from plugins.transport_cli.help_text import help_width

if TYPE_CHECKING:
    from echo_core import PluginHost

__all__ = ["help_key", "is_help_line", "print_cached_help", "remember_help"]

NAME = "root-help"
_LINES = (("--help",), ("-h",))


def is_help_line(argv: Sequence[str]) -> bool:
    """True for ``echo-memory --help`` and ``echo-memory -h`` exactly."""
    return tuple(argv) in _LINES


def help_key(host: PluginHost, argv: Sequence[str]) -> dict[str, Any]:
    """Every input of the page but the code: the line, the width, the interpreter and
    each plugin's name, version and status."""
    plugins = sorted([r.name, r.version, r.status] for r in host.records.values())
    return {"argv": list(argv), "width": help_width(), "python": sys.version,
            "executable": sys.executable, "plugins": plugins}


def print_cached_help(host: PluginHost, argv: Sequence[str]) -> bool:
    """Print the kept page for ``argv`` and return True; False when there is none."""
    from echo_core import cached_output

    text = cached_output(NAME, help_key(host, argv))
    if text is None:
        return False
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return True


def remember_help(host: PluginHost, argv: Sequence[str], text: str) -> None:
    """Keep ``text``, the page just printed for ``argv``."""
    from echo_core import remember_output

    remember_output(NAME, help_key(host, argv), text)
