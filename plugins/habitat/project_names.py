"""The project a working folder belongs to (insights are kept and given per project)."""

from __future__ import annotations

import os

__all__ = ["MAX_LEVELS", "project_of"]

#: How far up from ``cwd`` a ``.git`` is looked for.
MAX_LEVELS = 12


def project_of(cwd: str) -> str:
    """The project a working folder belongs to: the nearest folder at or above ``cwd``
    holding ``.git`` (a repository's root), else ``cwd``'s own name; "" for no cwd."""
    if not cwd or "\x00" in cwd:
        return ""
    path = os.path.abspath(cwd)
    probe = path
    for _ in range(MAX_LEVELS):
        try:
            if os.path.exists(os.path.join(probe, ".git")):
                return os.path.basename(probe)
        except (OSError, ValueError):
            break
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    return os.path.basename(path.rstrip(os.sep))
