"""The vault's note history as backup entries, under ``HISTORY_FOLDER`` in the zip.

Note history (the versions ``history`` lists, ``echo_core.history``) is kept per machine
in ``<state dir>/vaults/<vault id>/history``, or in the vault's store for a backend that
shares it (``.echo-history/`` there: PostgreSQL). Either way a backup takes the same
files, in the same layout, under ``.echo-history/``: ``paths.ndjson``,
``paths-scanned.ndjson``, ``renames.ndjson`` and each ring's ``versions.ndjson`` and text
blobs (a folder named by the note path's hash; vault-relative, so valid on any machine). Nothing else
is taken: no temp files, nothing of ``.staging/``. ``import --from`` the unzipped backup
merges that folder into the restored vault's history (``transfer_history``), which
brings the versions back. A file that vanishes while it is read (a ring compacted
meanwhile) is left out: history tolerates a missing blob.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from echo_core.history import INDEX_NAME, PATHS_LOG, PATHS_SCANNED, RENAMES_LOG
from echo_core.history_files import HISTORY_PREFIX, HistoryFiles, history_files
from echo_core.protocols import Storage

#: Where a backup zip holds the note history (the shared history's own folder name).
HISTORY_FOLDER = f"{HISTORY_PREFIX}/"
_BLOB = re.compile(r"[0-9a-f]{64}")
_RING = re.compile(r"[0-9a-f]{16}")
_READERS = 8
_CHUNK = 64


def _history_names(files: HistoryFiles) -> list[str]:
    """The history's own files, relative to its root, sorted."""
    rings = sorted(r for r in files.folders() if _RING.fullmatch(r))
    with ThreadPoolExecutor(max_workers=_READERS) as pool:
        listed = list(pool.map(files.names, rings))
    names = [PATHS_LOG, PATHS_SCANNED, RENAMES_LOG]
    for ring, inside in zip(rings, listed, strict=True):
        names += sorted(f"{ring}/{n}" for n in inside if n == INDEX_NAME or _BLOB.fullmatch(n))
    return names


def history_entries(storage: Storage, state_dir: Path) -> Iterator[tuple[str, bytes]]:
    """``(zip path, bytes)`` of each note-history file of the vault (see the module
    docstring); ``BackendUnavailable`` when a shared history cannot be reached."""
    files = history_files(storage, state_dir)
    names = _history_names(files)
    with ThreadPoolExecutor(max_workers=_READERS) as pool:
        for start in range(0, len(names), _CHUNK):  # a chunk at a time in memory
            chunk = names[start:start + _CHUNK]
            for name, data in zip(chunk, pool.map(files.read, chunk), strict=True):
                if data is not None:
                    yield HISTORY_FOLDER + name, data
