"""Writes through a symlink that stays inside a folder vault: only to a note.

A path through a symlink (a linked file, or a linked folder on the way) that stays inside
the vault writes the file the link leads to, which is another vault path. That path must
be one a note write may reach itself (``require_note_path``: a ``.md`` note, not the vault
marker, the index or a dot-folder), or a link would be a way around the write scope: a
link ``inbox/m.md`` -> ``_agent/echo-vault.md`` made ``put inbox/m.md`` replace the
marker. Links leading outside the vault are refused before this (``FolderStorage._real``).
"""

from __future__ import annotations

from pathlib import Path

from echo_core import EchoError, require_note_path, usage_error

__all__ = ["require_writable_through"]


def require_writable_through(root: Path, prefix: str, rel: str, real: Path) -> None:
    """Nothing when ``real`` (the resolved file of the vault path ``rel``, under the
    vault folder ``root`` written as ``prefix``) is ``rel`` itself or a note path a write
    may reach; else ``EchoError`` (2) naming the link and the path it reaches."""
    if str(real) == f"{prefix}/{rel}":
        return
    reached = real.relative_to(root).as_posix()
    try:
        require_note_path(reached)
    except EchoError as refused:
        raise usage_error(f"path {rel!r} leads through a symlink to {reached!r}, which no "
                          f"note write may change ({refused.message}); remove the link or "
                          "write the note itself") from None
