"""``LazyPattern``: a regular expression compiled on first use, not at import.

A module-level ``re.compile`` runs in every process that imports the module; a pattern
with wide Unicode ranges costs milliseconds (``frontmatter_fast``'s unsafe-character
class: ~4.6 ms), paid even by a command that never matches it, and even a plain pattern
costs 0.05-0.3 ms. A cold recall imports ~20 patterns it never uses (the note parser's,
the frontmatter writer's, the agent log's): ~2.5 ms of a ~90 ms hook, so the modules on
that path hold theirs as ``LazyPattern``. A use costs one attribute lookup more than the
compiled pattern's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["LazyPattern"]


class LazyPattern:
    """A pattern compiled on its first use (``pattern``: its source). Its methods are
    ``re.Pattern``'s, with the same arguments and results."""

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

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        """``re.Pattern.search``."""
        return self.compiled().search(text, pos)

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        """``re.Pattern.match``."""
        return self.compiled().match(text, pos)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        """``re.Pattern.fullmatch``."""
        return self.compiled().fullmatch(text)

    def findall(self, text: str) -> list[Any]:
        """``re.Pattern.findall``."""
        return self.compiled().findall(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """``re.Pattern.finditer``."""
        return self.compiled().finditer(text)

    def split(self, text: str, maxsplit: int = 0) -> list[str | Any]:
        """``re.Pattern.split``."""
        return self.compiled().split(text, maxsplit)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
        """``re.Pattern.sub``."""
        return self.compiled().sub(repl, text)
