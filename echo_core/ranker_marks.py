"""Marks saying a ranker missed note changes and must be rebuilt from the notes.

A ranker misses a change when its ``upsert`` / ``remove`` failed after a write, or when
it could not run at all in the process that wrote (its plugin gone or failing: ``bm25``
stood in). The core then marks it: one small file per ranker name in
``<state_dir>/recall-rebuild/`` (beside the ranker folder ``<state_dir>/recall``, so the
ranker's own files and their age are untouched), holding a random token.

``ops.recall_index`` rebuilds a marked persistent ranker before its next search, like
one whose ``needs_rebuild()`` says so (a plain one is rebuilt from the corpus by every
new process anyway), then clears the mark only when it still holds the token read before
the rebuild: a change missed during the rebuild keeps it marked.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["clear_mark", "mark_stale", "marks_folder", "stale_token"]

#: The folder of the marks, beside the ranker folder.
FOLDER_NAME = "recall-rebuild"


def marks_folder(ranker_folder: str | os.PathLike[str]) -> Path:
    """Where the marks of the rankers keeping their files in ``ranker_folder`` live."""
    return Path(ranker_folder).with_name(FOLDER_NAME)


def _mark_path(ranker_folder: str | os.PathLike[str], name: str) -> Path:
    """The mark file of ``name``: its letters, digits, ``_`` and ``-`` as they are, any
    other character as ``%`` and its code (one name, one file; no hashlib at start-up)."""
    safe = "".join(c if (c.isascii() and c.isalnum()) or c in "_-" else f"%{ord(c):x}"
                   for c in name)
    return marks_folder(ranker_folder) / (safe or "%")


def mark_stale(ranker_folder: str | os.PathLike[str], name: str) -> bool:
    """Mark ranker ``name`` for a rebuild (a fresh token each time); False when the mark
    cannot be written (the caller has warned already)."""
    target = _mark_path(ranker_folder, name)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fresh = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}")
        fresh.write_text(os.urandom(8).hex(), encoding="ascii")
        os.replace(fresh, target)
    except OSError:
        return False
    return True


def stale_token(ranker_folder: str | os.PathLike[str], name: str) -> str | None:
    """The token of ranker ``name``'s mark, None when it is not marked (one ``open``)."""
    try:
        return _mark_path(ranker_folder, name).read_text(encoding="ascii") or "marked"
    except (OSError, ValueError):
        return None


def clear_mark(ranker_folder: str | os.PathLike[str], name: str, token: str | None) -> None:
    """Remove ranker ``name``'s mark if it still holds ``token`` (nothing when ``token``
    is None: it was not marked when the rebuild started)."""
    if token is None or stale_token(ranker_folder, name) != token:
        return
    with contextlib.suppress(OSError):
        os.unlink(_mark_path(ranker_folder, name))
