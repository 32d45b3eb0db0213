"""``LazyPattern``: a regular expression compiled on first use, not at import.

A module-level ``re.compile`` runs in every process that imports the module; a pattern
with wide Unicode ranges costs milliseconds (``frontmatter_fast``'s unsafe-character
class: ~4.6 ms), paid even by a command that never matches it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["LazyPattern"]


class LazyPattern:
    """A pattern compiled on its first ``search`` or ``sub`` (``pattern``: its source)."""

    __slots__ = ("_compiled", "_flags", "pattern")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.pattern = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now the first time)."""
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self._flags)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        """``re.Pattern.search``."""
        return self.compiled().search(text)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
        """``re.Pattern.sub``."""
        return self.compiled().sub(repl, text)
