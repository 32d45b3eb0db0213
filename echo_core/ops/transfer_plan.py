"""What a transfer will copy, decided before it copies anything: the files with their
sizes and times, the notes too large to be notes, the batches they are read in, the
paths that cannot coexist (a file and a folder of one name), and the order (the vault
marker last).

* A note (a ``.md`` file) over ``NOTE_CAP`` bytes (``text_source.MAX_SOURCE_BYTES``,
  the most any text source gives: a note through the CLI, an ingest download) is not
  imported: it is skipped and listed. Other files (attachments) have no cap.
* Files are read a batch at a time: at most ``CHUNK`` files and ``BATCH_BYTES`` bytes
  (a single larger file is a batch of its own), so memory holds one batch.
* A path clashes when one path is a folder above another (``a.md`` and ``a.md/b.md``):
  no folder can hold both. ``clashes`` finds them between the paths to write and those
  a vault holds; ``folder_clashes`` adds what a folder vault's own folder has that its
  listing does not show (an empty folder, a hidden file where a folder must go).
* The marker goes last (``marker_last``): a copy cut short is not a vault yet.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from echo_core.ops.vault_transfer_io import CHUNK, NOTE_CAP, SourceFile, TransferSkip, is_note
from echo_core.vault import MARKER_PATH

#: The most bytes of files read into memory at once (one batch).
BATCH_BYTES = 32 * 1024 * 1024


def over_cap_reason(size: int) -> str:
    """Why a note of ``size`` bytes is not imported."""
    return (f"a note of {size:,} bytes, over the {NOTE_CAP:,}-byte cap for one note; "
            "not imported (split it, or rename it to another extension to copy it as an "
            "attachment)")


def within_cap(files: Iterable[SourceFile], skipped: list[TransferSkip]) -> list[SourceFile]:
    """``files`` without the notes over ``NOTE_CAP``, which go to ``skipped``."""
    kept = []
    for file in files:
        if is_note(file.path) and file.size > NOTE_CAP:
            skipped.append(TransferSkip(file.path, over_cap_reason(file.size)))
        else:
            kept.append(file)
    return kept


def batches(files: Sequence[SourceFile], *, count: int = 0,
            size: int = 0) -> Iterator[list[SourceFile]]:
    """``files`` in consecutive batches of at most ``count`` files (``CHUNK``) and
    ``size`` bytes (``BATCH_BYTES``); a file larger than ``size`` is a batch alone."""
    count = count or CHUNK
    size = size or BATCH_BYTES
    batch: list[SourceFile] = []
    held = 0
    for file in files:
        if batch and (len(batch) >= count or held + file.size > size):
            yield batch
            batch, held = [], 0
        batch.append(file)
        held += file.size
    if batch:
        yield batch


def marker_last(files: Sequence[SourceFile]) -> list[SourceFile]:
    """``files`` in their order, the vault marker moved to the end."""
    return ([f for f in files if f.path != MARKER_PATH]
            + [f for f in files if f.path == MARKER_PATH])


def _parents(path: str) -> Iterator[str]:
    parts = path.split("/")
    for n in range(1, len(parts)):
        yield "/".join(parts[:n])


def clashes(paths: Sequence[str], held: Iterable[str]) -> dict[str, str]:
    """The paths of ``paths`` that cannot be written beside ``held`` (the files already
    there) and the rest of ``paths``: path -> why (a parent of it is a file, or it is a
    folder there)."""
    theirs = set(held)
    ours = set(paths)
    every = sorted(theirs | ours)
    found: dict[str, str] = {}
    for path in paths:
        parent = next((p for p in _parents(path) if p in theirs or p in ours), None)
        if parent is not None:
            where = "a file in the vault" if parent in theirs else "a file too"
            found[path] = f"its parent {parent} is {where}; no folder can hold both"
            continue
        below = every[bisect.bisect_left(every, path + "/"):][:1]
        if below and below[0].startswith(path + "/") and below[0] in theirs:
            found[path] = f"it is a folder in the vault (holding {below[0]})"
    return found


def folder_clashes(folder: Path, paths: Sequence[str]) -> dict[str, str]:
    """``clashes`` with a folder vault's own folder: a path that is a folder there
    (an empty one too), or under an entry there that is not a folder."""
    found: dict[str, str] = {}
    checked: dict[str, bool] = {}
    for path in paths:
        if (folder / path).is_dir():
            found[path] = "it is a folder in the vault"
            continue
        for parent in _parents(path):
            if parent not in checked:
                full = folder / parent
                checked[parent] = full.exists() and not full.is_dir()
            if checked[parent]:
                found[path] = f"its parent {parent} is a file in the vault, not a folder"
                break
    return found
