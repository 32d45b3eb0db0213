"""Warnings shown as the CLI shows them: echo-memory's own (a stale vault lock broken) as
one ``warning: ...`` line on stderr, any other as Python shows it. Imports no click (the
direct path of ``run_direct`` uses it too)."""

from __future__ import annotations

import contextlib
import functools
import sys
import warnings
from collections.abc import Iterator
from typing import Any

from echo_core import terminal_safe

__all__ = ["clean_warnings"]


def _warning_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None,
                  *, default: Any = None) -> None:
    """``warnings.showwarning`` for the CLI: echo-memory's own warnings (a stale vault
    lock broken) as one ``warning: ...`` line on stderr, without Python's source path and
    code line; any other warning as Python shows it."""
    from echo_core import RankerFallbackWarning, StaleLockWarning

    if issubclass(category, (StaleLockWarning, RankerFallbackWarning)):
        sys.stderr.write(f"warning: {terminal_safe(str(message))}\n")
        sys.stderr.flush()
    elif default is not None:
        default(message, category, filename, lineno, file, line)


@contextlib.contextmanager
def clean_warnings() -> Iterator[None]:
    """Show warnings raised inside the block as ``_warning_line`` does."""
    with warnings.catch_warnings():
        warnings.showwarning = functools.partial(_warning_line, default=warnings.showwarning)
        yield
