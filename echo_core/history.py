"""Note history (SPEC §5.6): the prior texts of overwritten notes, per path, in the state
dir, or in the vault's own store when the backend shares it between machines
(``history_files``: PostgreSQL).

Layout, under the history's root (``<state_dir>/history``, or ``.echo-history/`` in the
store)::

    <sha256(path)[:16]>/versions.ndjson  one line per kept version, oldest first:
                                         {"path", "version_id", "sha", "saved_at", "size",
                                          "headline"}
    <sha256(path)[:16]>/<sha256(text)>   one blob per distinct text, the exact UTF-8 bytes
    paths.ndjson                         {"path"}: one line per ring, added when it is made
    paths-scanned.ndjson                 {"path"}: the rings there were before paths.ndjson,
                                         found once by reading each ring's log
    renames.ndjson                       {"from", "to", "at"}: one line per note renamed by
                                         hand (``record_rename``), oldest first
    deleted.ndjson                       {"path", "h", "at"}: one line per note deleted by
                                         hand (``record_deleted``), oldest first

Contracts:

* Content-addressed: a text is stored once per path. Keeping a text the ring already
  holds moves its entry to the newest position (with the new ``saved_at``) and writes no
  new blob.
* A ring: at most ``ring_size`` (20) versions per path; the oldest entry and its blob are
  dropped beyond that.
* Cheap: a keep writes the blob (when new) and appends one line (two for a path's first
  version: its line in ``paths.ndjson``, so ``paths_named`` needs no scan); no rename, no fsync
  (history guards against bad edits, not power cuts: the note write itself is durable).
  The log is compacted (atomically, temp file + rename) when it has more than twice
  ``ring_size`` lines. Damage is detected, never served: an unparsable (torn) line is
  skipped; a blob whose SHA-256 is wrong is a 44 for ``text``, and one of the wrong size
  is rewritten by the next ``keep`` of that text.
* What is versioned is decided by ``Vault`` (see ``echo_core.vault``): every note write
  through ``Vault.write_note`` that replaces a different text (whole-note overwrites,
  section replaces, frontmatter edits) and ``Vault.delete_note``. Appends only add a line,
  so they are not versioned. Derived files written through the storage directly (the
  entity index snapshot and journal) are not notes and are never versioned.
* ``merge`` adds another history's versions of a path (``import`` of a backup's
  ``.echo-history/``): the ring's own versions are never replaced or dropped, a text it
  holds is not added again, and the others fill its free places, newest first.
* Rings are per path. ``paths_named`` lists the paths of one file name that have a ring,
  and ``versions_of`` merges several rings (a note moved from one path to another keeps
  its name: ``ops.history`` follows it); each ``Version`` says the path it was kept for.
* A rename that changes the file name is known only from ``renames.ndjson``: the
  vault-change check records it (``ops.vault_changes``: ``record_rename``), and
  ``renamed`` follows its chains both ways (a cycle stops where it comes back). A pair
  recorded again adds nothing; an unparsable line is skipped (a torn last line is ended
  before the next is added); beyond ``2 * RENAMES_KEPT`` lines the log is rewritten
  (atomically) as its newest ``RENAMES_KEPT`` pairs. It is not in backups.
* A note deleted by hand is known only from ``deleted.ndjson``: the vault-change check
  records the path and ``h``, the ``content_hash`` (the first 16 hex digits of the
  SHA-256) of the note's last text as last recorded, so ``history`` can tell whether that
  text is kept (a version whose ``sha`` starts with it) or lost (a ring keeps the texts
  writes replace, so the one the last write left is in it only when kept before).
  ``deleted`` gives a path's newest record. Torn lines are skipped; beyond
  ``2 * DELETED_KEPT`` lines the log is rewritten (atomically) as the newest record of
  each of the ``DELETED_KEPT`` paths deleted last. It is not in backups.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from echo_core import digests
from echo_core.errors import EchoError, not_found
from echo_core.history_files import HistoryFiles, LocalHistoryFiles

RING_SIZE = 20
INDEX_NAME = "versions.ndjson"
PATHS_LOG = "paths.ndjson"
PATHS_SCANNED = "paths-scanned.ndjson"
RENAMES_LOG = "renames.ndjson"
RENAMES_KEPT = 500
DELETED_LOG = "deleted.ndjson"
DELETED_KEPT = 2000
MIN_PREFIX = 4
HEADLINE_CHARS = 80
_SHA = re.compile(r"[0-9a-f]{64}")
_ID_CHARS = 12


@attrs.frozen
class Version:
    """One kept text of a note: ``version_id`` (the first 12 hex digits of ``sha``, the
    SHA-256 of its UTF-8 bytes), when it was kept, its size in bytes, its first
    heading or first non-empty line (``headline``) and the note path it was kept for
    (``path``: its ring)."""

    version_id: str
    sha: str
    saved_at: str
    size: int
    headline: str = ""
    path: str = ""


@attrs.frozen
class Merged:
    """What ``NoteHistory.merge`` did with the versions offered: ``added`` (as written,
    oldest first), ``already`` (their text was in the ring) and ``no_room`` (older than
    those added, once the ring was full)."""

    added: tuple[Version, ...] = ()
    already: tuple[Version, ...] = ()
    no_room: tuple[Version, ...] = ()


@attrs.frozen
class Deleted:
    """A note found deleted by hand: its ``path``, ``h`` (the ``content_hash`` of its last
    text as last recorded: the first 16 hex digits of its SHA-256, so a ``Version``
    whose ``sha`` starts with it is that text) and when the deletion was noticed (``at``)."""

    path: str
    h: str
    at: str


def path_key(path: str) -> str:
    """The folder name of ``path``'s ring: the first 16 hex digits of its SHA-256."""
    return digests.sha256(path.encode("utf-8")).hexdigest()[:16]


def headline(text: str) -> str:
    """The first ``#`` heading after any frontmatter block, else the first non-empty line
    (at most 80 characters)."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        for i, line in enumerate(lines[1:], start=1):
            if line.strip() in ("---", "..."):
                lines = lines[i + 1:]
                break
    body = [line.strip() for line in lines if line.strip()]
    first = next((line for line in body if line.startswith("#")), body[0] if body else "")
    return first[:HEADLINE_CHARS]


def _line(path: str, version: Version) -> str:
    fields = attrs.asdict(version, filter=lambda a, _v: a.name != "path")
    return json.dumps({"path": path, **fields}, ensure_ascii=False) + "\n"


def _path_line(path: str) -> str:
    return json.dumps({"path": path}, ensure_ascii=False) + "\n"


def _file_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _ring(records: list[Version], size: int) -> list[Version]:
    """The newest ``size`` distinct texts of ``records`` (oldest first); a text kept again
    counts at its latest position."""
    latest: dict[str, Version] = {}
    for version in records:
        latest.pop(version.sha, None)
        latest[version.sha] = version
    return list(latest.values())[-size:]


def rename_pairs(data: bytes) -> dict[tuple[str, str], str]:
    """Each ``(from, to)`` pair a ``RENAMES_LOG`` text records, with its first line (a
    torn or unreadable line, or a pair of one path, is left out)."""
    pairs: dict[tuple[str, str], str] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            item = json.loads(line)
            old, new = item["from"], item["to"]
        except (ValueError, KeyError, TypeError):
            continue  # a torn line
        if isinstance(old, str) and isinstance(new, str) and old != new:
            pairs.setdefault((old, new), line + "\n")
    return pairs


class NoteHistory:
    """The version rings of one vault, kept in ``files`` (a ``HistoryFiles``, or a local
    folder: created on first ``keep``).

    Safe for threads of one process; processes writing the same note are serialised by
    the vault lock their writes hold."""

    def __init__(self, files: HistoryFiles | Path, *, ring_size: int = RING_SIZE) -> None:
        self.files: HistoryFiles = (LocalHistoryFiles(files) if isinstance(files, Path)
                                    else files)
        self.ring_size = ring_size
        self._lock = threading.Lock()

    def _records(self, path: str) -> list[Version]:
        """Every parsable line of ``path``'s log, oldest first ([] when absent)."""
        data = self.files.read(f"{path_key(path)}/{INDEX_NAME}")
        if data is None:
            return []
        try:
            raw = data.decode("utf-8")
        except UnicodeDecodeError:
            raw = data.decode("utf-8", "replace")
        records: list[Version] = []
        for line in raw.splitlines():
            try:
                item = json.loads(line)
                if item.get("path") != path or not _SHA.fullmatch(str(item["sha"])):
                    continue
                records.append(Version(str(item["version_id"]), str(item["sha"]),
                                       str(item["saved_at"]), int(item["size"]),
                                       str(item.get("headline", "")), path))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # a torn or foreign line
        return records

    def keep(self, path: str, text: str, *, saved_at: str) -> Version:
        """Keep ``text`` as the newest version of ``path`` (see the module contracts).

        Returns its ``Version``. Errors: ``OSError`` when the state dir is not writable."""
        data = text.encode("utf-8")
        sha = digests.sha256(data).hexdigest()
        version = Version(sha[:_ID_CHARS], sha, saved_at, len(data), headline(text), path)
        key = path_key(path)
        files = self.files
        with self._lock:
            records = self._records(path)
            if not records:  # a new ring (or one whose log was lost): listed by name
                files.append(PATHS_LOG, _path_line(path))
            stored = files.read(f"{key}/{sha}")
            if stored is None or len(stored) != len(data):
                files.write(f"{key}/{sha}", data)
            files.append(f"{key}/{INDEX_NAME}", _line(path, version))
            before = _ring(records, self.ring_size)
            records.append(version)
            after = _ring(records, self.ring_size)
            kept = {v.sha for v in after}
            for gone in (v for v in before if v.sha not in kept):
                files.delete(f"{key}/{gone.sha}")
            if len(records) > 2 * self.ring_size:
                self._compact(path, key, after)
        return version

    def merge(self, path: str, offered: Sequence[Version],
              text_of: Callable[[Version], bytes | None]) -> Merged:
        """Add the ``offered`` versions of ``path`` (another history's: only their
        ``sha`` and ``saved_at`` are used) to its ring. A text the ring holds is
        ``already`` there (its entry untouched; offered twice, it counts once); the
        ring's own versions are never dropped; the other texts fill its free places
        (``ring_size`` less what it holds), newest ``saved_at`` first, the rest
        ``no_room``. ``text_of`` gives a version's exact bytes (SHA-256 ``sha``, UTF-8),
        or None to leave it out (then in no list). The log is rewritten oldest
        ``saved_at`` first (atomically); nothing is written when nothing is added.
        Errors: ``OSError`` when the history cannot be written."""
        newest: dict[str, Version] = {}
        for version in sorted(offered, key=lambda v: v.saved_at):
            newest.pop(version.sha, None)
            newest[version.sha] = version
        key = path_key(path)
        files = self.files
        with self._lock:
            records = self._records(path)
            ring = _ring(records, self.ring_size)
            held = {v.sha for v in ring}
            already = tuple(v for v in newest.values() if v.sha in held)
            room = self.ring_size - len(ring)
            added: list[Version] = []
            no_room: list[Version] = []
            for offer in reversed([v for v in newest.values() if v.sha not in held]):
                if len(added) >= room:
                    no_room.append(offer)
                    continue
                data = text_of(offer)
                if data is None:
                    continue
                stored = files.read(f"{key}/{offer.sha}")
                if stored is None or len(stored) != len(data):
                    files.write(f"{key}/{offer.sha}", data)
                added.append(Version(offer.sha[:_ID_CHARS], offer.sha, offer.saved_at,
                                     len(data), headline(data.decode("utf-8")), path))
            added.reverse()  # oldest first, as a log (a tie in time keeps this order)
            if added:
                if not records:
                    files.append(PATHS_LOG, _path_line(path))
                merged = sorted([*ring, *added], key=lambda v: v.saved_at)
                files.write(f"{key}/{INDEX_NAME}",
                            "".join(_line(path, v) for v in merged).encode("utf-8"))
        return Merged(tuple(added), already, tuple(no_room))

    def _compact(self, path: str, key: str, ring: list[Version]) -> None:
        """Rewrite the log as ``ring`` and delete blobs it does not name."""
        self.files.write(f"{key}/{INDEX_NAME}", "".join(_line(path, v) for v in ring).encode())
        kept = {v.sha for v in ring}
        for name in self.files.names(key):
            if _SHA.fullmatch(name) and name not in kept:
                self.files.delete(f"{key}/{name}")

    def versions(self, path: str) -> list[Version]:
        """The kept versions of ``path``, newest first ([] when none)."""
        return list(reversed(_ring(self._records(path), self.ring_size)))

    def versions_of(self, paths: Sequence[str]) -> list[Version]:
        """The kept versions of all ``paths`` (one note under the paths it had), newest
        first: one path's as ``versions``; several merged by ``saved_at``, a text kept
        under two of them listed once (its newest)."""
        if len(paths) == 1:
            return self.versions(paths[0])
        merged = sorted((v for p in dict.fromkeys(paths) for v in self.versions(p)),
                        key=lambda v: v.saved_at, reverse=True)
        newest: dict[str, Version] = {}
        for version in merged:
            newest.setdefault(version.sha, version)
        return list(newest.values())

    def paths_named(self, name: str) -> list[str]:
        """The note paths with a ring whose file name is ``name`` (``x.md``), sorted."""
        found: set[str] = set()
        for data in (self._scanned(), self.files.read(PATHS_LOG) or b""):
            for line in data.decode("utf-8", "replace").splitlines():
                try:
                    path = json.loads(line)["path"]
                except (ValueError, KeyError, TypeError):
                    continue  # a torn line
                if isinstance(path, str) and _file_name(path) == name:
                    found.add(path)
        return sorted(found)

    def _rename_lines(self) -> tuple[bytes, dict[tuple[str, str], str]]:
        """``RENAMES_LOG`` as stored, and each pair it records (first line kept)."""
        data = self.files.read(RENAMES_LOG) or b""
        return data, rename_pairs(data)

    def renames(self) -> list[tuple[str, str]]:
        """The recorded renames ``(from, to)``, oldest first, each pair once."""
        return list(self._rename_lines()[1])

    def record_rename(self, old: str, new: str, *, at: str) -> bool:
        """Record that the note at ``old`` is now at ``new`` (renamed by hand, its text
        unchanged), ``at`` an ISO time. False (nothing written) when that pair is
        recorded already. The caller holds the vault lock (the log may be rewritten).
        Errors: ``OSError`` when the history cannot be written."""
        with self._lock:
            data, pairs = self._rename_lines()
            if (old, new) in pairs or old == new:
                return False
            line = json.dumps({"from": old, "to": new, "at": at}, ensure_ascii=False) + "\n"
            if data.count(b"\n") + 1 > 2 * RENAMES_KEPT:
                kept = [*pairs.values(), line][-RENAMES_KEPT:]
                self.files.write(RENAMES_LOG, "".join(kept).encode("utf-8"))
            else:
                torn = "\n" if data and not data.endswith(b"\n") else ""
                self.files.append(RENAMES_LOG, torn + line)
        return True

    def _deleted_records(self) -> tuple[bytes, list[Deleted]]:
        """``DELETED_LOG`` as stored, and its parsable records, oldest first."""
        data = self.files.read(DELETED_LOG) or b""
        records: list[Deleted] = []
        for line in data.decode("utf-8", "replace").splitlines():
            try:
                item = json.loads(line)
                record = Deleted(item["path"], item["h"], item["at"])
            except (ValueError, KeyError, TypeError):
                continue  # a torn line
            if all(isinstance(v, str) for v in (record.path, record.h, record.at)):
                records.append(record)
        return data, records

    def record_deleted(self, notes: Sequence[tuple[str, str]], *, at: str) -> None:
        """Record that the notes ``(path, h)`` were deleted by hand (``Deleted``), ``at``
        an ISO time: one append (the log rewritten, atomically, when it grows beyond
        ``2 * DELETED_KEPT`` lines). The caller holds the vault lock. Errors: ``OSError``
        when the history cannot be written."""
        if not notes:
            return
        lines = [json.dumps({"path": p, "h": h, "at": at}, ensure_ascii=False) + "\n"
                 for p, h in notes]
        with self._lock:
            data, records = self._deleted_records()
            if data.count(b"\n") + len(lines) > 2 * DELETED_KEPT:
                newest: dict[str, Deleted] = {}
                for record in [*records, *(Deleted(p, h, at) for p, h in notes)]:
                    newest.pop(record.path, None)
                    newest[record.path] = record
                kept = list(newest.values())[-DELETED_KEPT:]
                self.files.write(DELETED_LOG, "".join(
                    json.dumps(attrs.asdict(r), ensure_ascii=False) + "\n"
                    for r in kept).encode("utf-8"))
            else:
                torn = "\n" if data and not data.endswith(b"\n") else ""
                self.files.append(DELETED_LOG, torn + "".join(lines))

    def deleted(self, path: str) -> Deleted | None:
        """The newest record of the note at ``path`` deleted by hand (None: none)."""
        found = [r for r in self._deleted_records()[1] if r.path == path]
        return found[-1] if found else None

    def renamed(self, path: str, *, forward: bool = False) -> list[str]:
        """The paths the note at ``path`` was renamed from (``forward``: to), through
        chains of recorded renames, nearest first; a path met again (a cycle) once."""
        step: dict[str, list[str]] = {}
        for old, new in self.renames():
            source, target = (old, new) if forward else (new, old)
            step.setdefault(source, []).insert(0, target)  # the newest first
        found: dict[str, None] = {path: None}
        frontier = [path]
        while frontier:
            ahead = [p for here in frontier for p in step.get(here, [])]
            frontier = [p for p in dict.fromkeys(ahead) if p not in found]
            found.update(dict.fromkeys(frontier))
        return list(found)[1:]

    def _scanned(self) -> bytes:
        """``PATHS_SCANNED``: made (once) by reading every ring's log when absent."""
        data = self.files.read(PATHS_SCANNED)
        if data is not None:
            return data
        paths: list[str] = []
        for folder in sorted(self.files.folders()):
            log = self.files.read(f"{folder}/{INDEX_NAME}") or b""
            for line in log.decode("utf-8", "replace").splitlines():
                try:
                    path = json.loads(line)["path"]
                except (ValueError, KeyError, TypeError):
                    continue
                if isinstance(path, str) and path_key(path) == folder:
                    paths.append(path)
                    break
        data = "".join(_path_line(p) for p in paths).encode("utf-8")
        try:
            self.files.write(PATHS_SCANNED, data)
        except (OSError, EchoError):
            pass  # a read-only state dir or store: scanned again next time
        return data

    def find(self, path: str, version_id: str, *,
             paths: Sequence[str] | None = None) -> Version:
        """The version of ``path`` (of all ``paths`` when given: ``versions_of``) whose
        id starts with ``version_id`` (at least 4 hex digits, case-insensitive). Errors:
        44 naming the path when it has no history, or the version (with the ids there
        are) when none or several match."""
        versions = self.versions_of(paths or [path])
        if not versions:
            raise not_found(f"no history for {path!r}: no earlier version of it was kept "
                            "(versions are kept when a note is overwritten); check the path")
        wanted = version_id.strip().lower()
        matches = [v for v in versions if len(wanted) >= MIN_PREFIX and v.sha.startswith(wanted)]
        if len(matches) == 1:
            return matches[0]
        known = ", ".join(v.version_id for v in versions)
        why = "matches several versions" if matches else "is not a version"
        raise not_found(f"{version_id!r} {why} of {path!r}; its versions (newest first): "
                        f"{known}; run `echo-memory history {path}`")

    def text(self, path: str, version: Version) -> str:
        """The exact text of ``version`` (from the ring of the path it was kept for, else
        ``path``'s). Errors: 44 when its blob is gone or damaged."""
        where = f"{path_key(version.path or path)}/{version.sha}"
        data = self.files.read(where)
        if data is None or digests.sha256(data).hexdigest() != version.sha:
            raise not_found(f"version {version.version_id} of {path!r} is listed but its "
                            f"text is missing or damaged in {self.files.where(where)}; pick "
                            "another version")
        return data.decode("utf-8")
