"""The last-known-good read cache (SPEC §4.1, §5.4): what ``load`` last read, kept per
machine in ``<state_dir>/read-cache/last-known-good.json`` so that a session can start
from it when the backend is unreachable.

* ``RecordingReader`` wraps a storage and records what is read through it: a text, an
  absent file (code 44), a failed read, a folder listing.
* ``ReadCache.save`` writes those records atomically (temp file, fsync, rename) as one
  JSON document ``{"format": 1, "saved_at", "notes": {path: {"text" | null, "saved_at"}},
  "listings": {prefix: [paths]}}``. A path whose read failed keeps its previous entry;
  everything else is replaced, so the cache holds what the last ``load`` read. A save of
  exactly what the file holds is skipped for up to ``REFRESH_AFTER`` (a digest beside the
  file, with the file's size and mtime, says what it holds).
* ``ReadCache.load`` gives a ``CachedReads`` (None when there is no readable cache), whose
  ``reader()`` serves ``read`` / ``list`` like a storage: a cached text, code 44 for a file
  that was absent, and a plain failure for anything the cache never saw.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs

from echo_core.errors import EchoError, ExitCode, not_found
from echo_core.protocols import BackendUnavailable
from echo_core.tempfiles import sweep_stale, temp_name

FOLDER = "read-cache"
FILE_NAME = "last-known-good.json"
#: Beside it: the digest of what it holds (``ReadCache.save`` skips an identical save).
DIGEST_NAME = "last-known-good.digest"
FORMAT = 1
#: Seconds an identical save may be skipped for: the offline banner's date is then at
#: most this much older than the last load that saw the same memory.
REFRESH_AFTER = 3600.0


class ReadSource(Protocol):
    """What ``load`` reads through: every ``Storage`` is one, and so is the cache."""

    def read(self, path: str) -> str:
        """Exact text of the file (code 44 when absent)."""
        ...

    def list(self, prefix: str = "") -> list[str]:
        """Sorted paths under ``prefix``."""
        ...


class RecordingReader:
    """A ``ReadSource`` over ``source`` that records each outcome (thread-safe)."""

    def __init__(self, source: ReadSource) -> None:
        self.source = source
        self.notes: dict[str, str | None] = {}  # None: absent
        self.failed: set[str] = set()
        self.listings: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def read(self, path: str) -> str:
        """Read through; a text or an absence is recorded, another failure marks the path."""
        try:
            text = self.source.read(path)
        except BackendUnavailable:
            raise
        except Exception as exc:
            with self._lock:
                if isinstance(exc, EchoError) and exc.code == ExitCode.NOT_FOUND:
                    self.notes[path] = None
                else:
                    self.failed.add(path)
            raise
        with self._lock:
            self.notes[path] = text
        return text

    def list(self, prefix: str = "") -> list[str]:
        """List through and record the listing."""
        found = self.source.list(prefix)
        with self._lock:
            self.listings[prefix] = list(found)
        return found


@attrs.frozen
class CachedText:
    """One cached file: its text (None when it was absent) and when that was read."""

    text: str | None
    saved_at: str


@attrs.frozen
class CachedReads:
    """The cache as saved: when, the files, and the folder listings."""

    saved_at: str
    notes: Mapping[str, CachedText]
    listings: Mapping[str, tuple[str, ...]]

    def reader(self) -> CachedReader:
        """A ``ReadSource`` serving these reads."""
        return CachedReader(self)


class CachedReader:
    """Serves ``read`` / ``list`` from a ``CachedReads`` (never touches the backend)."""

    def __init__(self, cached: CachedReads) -> None:
        self.cached = cached

    def read(self, path: str) -> str:
        """The cached text; 44 when it was absent; a failure when never cached."""
        entry = self.cached.notes.get(path)
        if entry is None:
            raise EchoError(f"not in the last-known-good cache of {self.cached.saved_at}")
        if entry.text is None:
            raise not_found(f"{path} was absent at {entry.saved_at}")
        return entry.text

    def list(self, prefix: str = "") -> list[str]:
        """The cached listing; a failure when never cached."""
        found = self.cached.listings.get(prefix)
        if found is None:
            raise EchoError(f"listing of {prefix!r} is not in the last-known-good cache")
        return list(found)


class ReadCache:
    """The cache file of one vault's state dir (``folder`` is ``<state_dir>/read-cache``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.file = folder / FILE_NAME

    def load(self) -> CachedReads | None:
        """The saved reads; None when there is no cache or it is unreadable."""
        try:
            raw = json.loads(self.file.read_text("utf-8"))
            if raw.get("format") != FORMAT:
                return None
            notes = {str(path): CachedText(
                None if entry["text"] is None else str(entry["text"]), str(entry["saved_at"]))
                for path, entry in raw["notes"].items()}
            listings = {str(prefix): tuple(str(p) for p in paths)
                        for prefix, paths in raw.get("listings", {}).items()}
            return CachedReads(str(raw["saved_at"]), notes, listings)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def save(self, notes: Mapping[str, str | None], *, saved_at: str,
             listings: Mapping[str, Sequence[str]] | None = None,
             failed: Sequence[str] = (), now: float | None = None) -> bool:
        """Replace the cache with ``notes`` (path -> text, None = absent) and ``listings``;
        a path in ``failed`` keeps its previous entry when there is one. Returns whether
        the file was written: a save of exactly what the file holds (same notes, same
        listings, nothing failed) within ``REFRESH_AFTER`` seconds of its last write
        (``now``: ``time.time()``) is skipped, the file's ``saved_at`` left as it was
        (every session start at 100k notes would re-encode 20k session-log names).
        Errors: ``OSError`` when the state dir is not writable."""
        digest = None if failed else _content_digest(notes, listings or {})
        if digest is not None and self._fresh_copy_of(digest, now):
            return False
        entries: dict[str, Any] = {
            path: {"text": text, "saved_at": saved_at} for path, text in notes.items()}
        if failed:
            previous = self.load()
            for path in failed:
                old = previous.notes.get(path) if previous is not None else None
                if old is not None and path not in entries:
                    entries[path] = {"text": old.text, "saved_at": old.saved_at}
        record = {"format": FORMAT, "saved_at": saved_at, "notes": entries,
                  "listings": {k: list(v) for k, v in (listings or {}).items()}}
        data = json.dumps(record, ensure_ascii=False).encode("utf-8")
        self.folder.mkdir(parents=True, exist_ok=True)
        sweep_stale(self.folder)  # leftovers of saves killed mid-write
        tmp = self.folder / temp_name(FILE_NAME)
        try:
            with open(tmp, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.file)
        finally:
            if tmp.exists():
                tmp.unlink()
        self._write_digest(digest)
        return True

    @property
    def _digest_file(self) -> Path:
        return self.folder / DIGEST_NAME

    def _fresh_copy_of(self, digest: str, now: float | None) -> bool:
        """Whether the file holds content of ``digest``, written less than
        ``REFRESH_AFTER`` seconds ago."""
        try:
            recorded = self._digest_file.read_text("ascii").split()
            st = self.file.stat()
        except (OSError, UnicodeDecodeError):
            return False
        age = (time.time() if now is None else now) - st.st_mtime
        # the file's size and mtime too: another process may have replaced it since
        return recorded == [digest, str(st.st_size), str(st.st_mtime_ns)] and \
            0 <= age < REFRESH_AFTER

    def _write_digest(self, digest: str | None) -> None:
        """Record the digest of what was just saved (none: the next save writes); a
        digest that cannot be written only costs the next save its shortcut."""
        try:
            if digest is None:
                self._digest_file.unlink(missing_ok=True)
            else:
                st = self.file.stat()
                self._digest_file.write_text(f"{digest} {st.st_size} {st.st_mtime_ns}",
                                             "ascii")
        except OSError:
            pass


def _content_digest(notes: Mapping[str, str | None],
                    listings: Mapping[str, Sequence[str]]) -> str:
    """A digest of the notes (path, text or absence) and listings a save would write."""
    from echo_core import digests

    h = digests.blake2b(digest_size=16)
    for path in sorted(notes):
        text = notes[path]
        h.update(f"{len(path)}:{path}{'-' if text is None else len(text)}:".encode())
        if text is not None:
            h.update(text.encode("utf-8", "surrogatepass"))
    for prefix in sorted(listings):
        h.update(f"\0{len(prefix)}:{prefix}\0".encode())
        h.update("\n".join(listings[prefix]).encode("utf-8", "surrogatepass"))
    return h.hexdigest()
