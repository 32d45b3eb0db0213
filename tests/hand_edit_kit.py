"""A person saving a note at the worst instant for a write: while the write's new text
sits fsynced in its temp file, before the rename (SPEC §1.3: a person's edit takes no
lock). Shared by the tests of operations that must keep such an edit."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest


def saved_by_hand_at_first_fsync(monkeypatch: pytest.MonkeyPatch,
                                 save: Callable[[], object],
                                 temp_of: str | None = None, times: int = 1) -> list[int]:
    """Run ``save`` (a person's save) right after an ``fsync`` from now on, the first
    ``times`` times: while a write's temp file is on disk and not yet renamed. With
    ``temp_of`` (a file name), only the fsyncs of that file's temp files count (the note
    history's own writes do not). The list grows by one each time ``save`` ran."""
    real_fsync = os.fsync
    saved: list[int] = []

    def fsync_then_save(fd: int) -> None:
        real_fsync(fd)
        if len(saved) < times and (temp_of is None or _is_temp_of(fd, temp_of)):
            saved.append(fd)
            save()

    monkeypatch.setattr(os, "fsync", fsync_then_save)
    return saved


def _is_temp_of(fd: int, name: str) -> bool:
    """Whether ``fd`` is open on a temp file of the file ``name`` (``tempfiles.temp_name``)."""
    try:
        target = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return False
    return target.startswith(f".{name[:8]}") and target.endswith(".tmp")
