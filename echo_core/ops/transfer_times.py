"""File times across a transfer: each file keeps the modification time it had, where the
target can hold one (sweep reads it: a hand-written note's ``created``, decay).

* Into a folder (an export, an import into a folder vault): ``os.utime`` after the file
  is written (``set_times``), or on the temp file before its rename (``write_file``'s
  ``mtime_ns``).
* Into a storage offering ``set_mtimes(times)`` (path -> mtime in ns; duck-typed, the
  ``Storage`` protocol does not change): that method.
* Any other storage (PostgreSQL records the server's clock at each write and offers no
  way to set it): the time of the copy stays.

The times of a vault's files are its stamps (``vault_scan.file_stamps``: PostgreSQL's
recorded time, a folder's mtime).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from echo_core.ops.vault_transfer_io import SourceFile, vault_folder
from echo_core.protocols import Storage
from echo_core.vault_scan import file_stamps


@runtime_checkable
class TimesSettable(Protocol):
    """A storage that sets its files' modification times (path -> ns)."""

    def set_mtimes(self, times: Mapping[str, int]) -> None: ...


def vault_files(storage: Storage, paths: Sequence[str]) -> list[SourceFile]:
    """``paths`` with their sizes and times as the vault stamps them (a file gone
    meanwhile: size and time 0; reading it then says it is gone)."""
    stamps = file_stamps(storage, paths)
    found = []
    for path in paths:
        stamp = stamps.get(path)
        found.append(SourceFile(path, *stamp) if stamp is not None else SourceFile(path, 0))
    return found


def set_times(storage: Storage, times: Mapping[str, int]) -> None:
    """Give the files of ``times`` (written just now) those modification times (ns)
    where ``storage`` can hold them; best effort: a file whose time cannot be set keeps
    the time of its write."""
    wanted = {path: ns for path, ns in times.items() if ns > 0}
    if not wanted:
        return
    folder = vault_folder(storage)
    if folder is not None:
        for path, ns in wanted.items():
            with contextlib.suppress(OSError):
                os.utime(folder / path, ns=(ns, ns), follow_symlinks=False)
    elif isinstance(storage, TimesSettable):
        storage.set_mtimes(wanted)
