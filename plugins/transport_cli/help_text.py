"""The root help text and the width it is wrapped to (no click here: the cached help
page, ``help_cache``, needs the width before click is imported)."""

from __future__ import annotations

import os
import sys

__all__ = ["HELP", "help_width"]

HELP = """echo-memory: persistent memory for AI agents, kept as plain markdown notes.

\b
Start here:
  echo-memory init --vault ~/notes    create a vault (safe on an existing one)
  echo-memory capture "Ada Lovelace" -k person -b "Wrote the first program."
                                      remember it (duplicates stop at a gate)
  echo-memory recall "first program"  find it again, ranked, with excerpts
  echo-memory load                    the brief an agent reads first
  echo-memory doctor                  check config, vault and plugins

The vault is --vault, else $ECHO_VAULT, else `vault` in ~/.config/echo-memory/config.toml,
else an embedded folder under ~/.local/share/echo-memory/vault. Every command takes
--json (a group's sub-commands too: `scope show --json` or `scope --json show`).
Exit codes: 0 ok (a write the outbox took says "queued"), 1 failure, 2 usage, 44 not
found, 69 vault unavailable (the message says whether the write waits in the outbox),
75 lock held, 76 duplicate gate, 78 not configured (or not a vault).
"""



def help_width() -> int:
    """The width click would give help text: the terminal's columns (``COLUMNS``, else
    stdout's terminal, else 80), at most 80, minus 2, at least 50. Given to click so its
    formatter need not import ``shutil`` (with zlib, bz2 and lzma) to ask."""
    columns = 0
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        pass
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return max(min(columns or 80, 80) - 2, 50)
