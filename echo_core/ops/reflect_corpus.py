"""Corpus mode of reflection (SPEC §4.4, issue 17 item 3): mine every Claude Code
transcript under a projects folder, resumably, and merge what they say.

``mine_corpus(root, state_path, batch=50)``:

1. lists every ``*.jsonl`` under ``root`` (recursively, symlinked folders not followed)
   in path order (``find_transcripts``);
2. loads the state file (``reflect_corpus_state``); a transcript whose size and
   modification time match its entry is not read again; one whose stamp changed is
   hashed, and when its content hash matches only its stamp is refreshed, else it is
   mined again and its entry (what it gave) is replaced; entries of transcripts gone
   from ``root`` are dropped;
3. mines what is left in batches of ``batch`` transcripts, saving the state atomically
   after each batch, reporting ``echo_core.progress`` after each transcript;
4. returns the merge (``merge_mined``) of every entry in path order.

Each transcript is read once, streamed in chunks (hashed as it is read, lines longer than
``MAX_LINE_BYTES`` dropped), so memory stays bounded whatever a transcript's size. A
transcript that cannot be read (permissions, vanished) or that the miner fails on is
skipped and reported, and keeps its previous entry if it had one; the next run tries it
again. Nothing here writes to the vault (``reflect_corpus_apply`` does).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from echo_core import progress
from echo_core.ops.reflect_corpus_state import (
    CorpusState,
    TranscriptEntry,
    load_state,
    miner_fingerprint,
    save_state,
)
from echo_core.tempfiles import sweep_stale

if TYPE_CHECKING:
    from echo_core.ops.transcript_mining import MinedProposal

__all__ = ["CorpusScan", "SkippedTranscript", "find_transcripts", "mine_corpus",
           "read_and_mine"]

DEFAULT_BATCH = 50
_CHUNK = 1024 * 1024
#: A longer line is dropped unread (the parser would drop it too).
MAX_LINE_BYTES = 8 * 1024 * 1024


@attrs.frozen
class SkippedTranscript:
    """A transcript this run could not mine, and why."""

    path: str
    reason: str


@attrs.frozen
class CorpusScan:
    """What a corpus run found: counts of this run's work and the merged proposals."""

    projects_dir: str
    state_path: str
    transcripts: int          # found under projects_dir
    mined: int                # read and mined by this run (new or changed)
    changed: int              # of those, transcripts mined before whose content changed
    reused: int               # taken from the state file unread (or read, same hash)
    removed: int              # entries dropped: their transcript is gone
    batches: int              # state saves this run made
    bytes_read: int
    seconds: float
    skipped: tuple[SkippedTranscript, ...]
    proposals: tuple[MinedProposal, ...]
    state_problem: str = ""   # why the state file on disk was not used ("" when it was)


def find_transcripts(root: Path) -> list[str]:
    """The ``*.jsonl`` files under ``root``, as ``/``-separated paths relative to it,
    sorted (code point order). Symlinked folders are not followed; unreadable folders
    are skipped."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        base = Path(folder).relative_to(root)
        found.extend((base / name).as_posix() for name in files if name.endswith(".jsonl"))
    return sorted(found)


def _lines(stream: Iterator[bytes], digest: hashlib._Hash, sizes: list[int]) -> Iterator[bytes]:
    """The lines of a byte stream (without newlines), hashing every byte into ``digest``
    and counting them in ``sizes[0]``; an over-long line is dropped, not held."""
    rest = b""
    dropping = False
    for chunk in stream:
        digest.update(chunk)
        sizes[0] += len(chunk)
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        for part in parts:
            if dropping:
                dropping = False
                continue
            yield part
        if len(rest) > MAX_LINE_BYTES:
            rest, dropping = b"", True
    if rest and not dropping:
        yield rest


def read_and_mine(path: Path, source: str) -> tuple[TranscriptEntry, int]:
    """Mine the transcript at ``path`` (one streamed read); its entry and the bytes
    read. ``OSError`` when it cannot be opened or read."""
    from echo_core.ops.transcript_mining import mine_transcript

    digest = hashlib.sha256()
    sizes = [0]
    with open(path, "rb") as stream:
        chunks = iter(lambda: stream.read(_CHUNK), b"")
        proposals = mine_transcript(_lines(chunks, digest, sizes), source=source)
        for chunk in chunks:  # a miner that stopped early: hash the rest all the same
            digest.update(chunk)
            sizes[0] += len(chunk)
        mtime = os.fstat(stream.fileno()).st_mtime_ns
    return TranscriptEntry(sizes[0], mtime, digest.hexdigest(), tuple(proposals)), sizes[0]


@attrs.define
class _Run:
    """The counters of one run."""

    mined: int = 0
    changed: int = 0
    reused: int = 0
    batches: int = 0
    bytes_read: int = 0
    skipped: list[SkippedTranscript] = attrs.field(factory=list)


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _same_content(path: Path, old: TranscriptEntry) -> TranscriptEntry | None:
    """``old`` with the file's new stamp when the file at ``path`` still has its content
    (hashed, not mined: a touched transcript costs a read, not a mining); else None."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(_CHUNK), b""):
            digest.update(chunk)
            size += len(chunk)
        mtime = os.fstat(stream.fileno()).st_mtime_ns
    if digest.hexdigest() != old.sha256:
        return None
    return attrs.evolve(old, size=size, mtime_ns=mtime)


def _mine_one(root: Path, rel: str, state: CorpusState, run: _Run) -> None:
    old = state.transcripts.get(rel)
    try:
        same = _same_content(root / rel, old) if old is not None else None
        if same is not None:
            state.transcripts[rel] = same
            run.reused += 1
            run.bytes_read += same.size
            return
        entry, size = read_and_mine(root / rel, Path(rel).stem)
    except OSError as exc:
        run.skipped.append(SkippedTranscript(rel, exc.strerror or str(exc)))
        return
    except Exception as exc:  # noqa: BLE001 - one hostile transcript must not stop a corpus
        run.skipped.append(SkippedTranscript(rel, f"mining failed: {type(exc).__name__}: {exc}"))
        return
    run.bytes_read += size
    state.transcripts[rel] = entry
    run.mined += 1
    run.changed += old is not None


def mine_corpus(root: str | os.PathLike[str], state_path: str | os.PathLike[str], *,
                batch: int = DEFAULT_BATCH,
                after_batch: Callable[[int], None] | None = None) -> CorpusScan:
    """Mine every transcript under ``root`` with the state in ``state_path`` (module
    docstring). ``after_batch(n)`` is called after the n-th state save of this run.
    Errors: ``FileNotFoundError`` / ``NotADirectoryError`` when ``root`` is not a
    folder; ``OSError`` when the state file cannot be written."""
    started = time.monotonic()
    root_path = Path(root)
    if not root_path.is_dir():
        raise (NotADirectoryError if root_path.exists() else FileNotFoundError)(
            f"{root_path} is not a folder")
    state_file = Path(state_path)
    sweep_stale(state_file.parent)  # the temp file of a save a kill interrupted
    files = find_transcripts(root_path)
    state = load_state(state_file, str(root_path), miner_fingerprint())
    present = set(files)
    gone = [rel for rel in state.transcripts if rel not in present]
    for rel in gone:
        del state.transcripts[rel]
    run = _Run()
    todo: list[str] = []
    for rel in files:
        entry = state.transcripts.get(rel)
        stamp = _stat(root_path / rel)
        if entry is not None and stamp is not None and entry.same_stamp(*stamp):
            run.reused += 1
        else:
            todo.append(rel)
    done = len(files) - len(todo)
    progress.report(done, len(files))
    for start in range(0, len(todo), max(1, batch)):
        for rel in todo[start:start + max(1, batch)]:
            _mine_one(root_path, rel, state, run)
            done += 1
            progress.report(done, len(files))
        save_state(state_file, state)
        run.batches += 1
        if after_batch is not None:
            after_batch(run.batches)
    if not todo and (gone or state.problem or not state_file.exists()):
        save_state(state_file, state)
        run.batches += 1
    return _scan(root_path, state_file, files, state, run, len(gone), started)


def _scan(root: Path, state_file: Path, files: list[str], state: CorpusState, run: _Run,
          removed: int, started: float) -> CorpusScan:
    from echo_core.ops.transcript_mining import merge_mined

    merged = merge_mined(state.transcripts[rel].proposals for rel in files
                         if rel in state.transcripts)
    return CorpusScan(str(root), str(state_file), len(files), run.mined, run.changed,
                      run.reused, removed, run.batches, run.bytes_read,
                      time.monotonic() - started, tuple(run.skipped), tuple(merged),
                      state.problem)
