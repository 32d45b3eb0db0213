"""The entries of a backup zip: each file with its modification time, and the manifest.

Every entry carries its file's modification time twice: in the zip date (local time, two
seconds' resolution, clamped to the format's 1980..2107) and, exact to the second, in the
extended timestamp field (``0x5455``, "UT": flags 1 and the Unix mtime, in the local and
the central header alike), which ``unzip`` restores. A time that is unknown or not a
number gets the backup's own time; one outside a signed 32-bit Unix time gets only the
zip date.

The manifest (``MANIFEST_NAME``, hidden: unzipped, it is never a note and ``import``
leaves it out) is the zip's last entry: JSON naming the vault id, when the backup was
written, whether the note history is in it, and every other entry's ``path``, ``size``,
``sha256`` and ``mtime`` (what ``backup_verify`` checks), plus the files the backup
skipped and why.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import struct
import time
import zipfile
from collections.abc import Sequence
from typing import Any, Protocol

import attrs

MANIFEST_NAME = ".echo-backup-manifest.json"
MANIFEST_FORMAT = "echo-memory backup manifest"
MANIFEST_VERSION = 1
_UT = 0x5455
_INT32 = (-(2**31), 2**31 - 1)
_ZIP_FIRST = (1980, 1, 1, 0, 0, 0)
_ZIP_LAST = (2107, 12, 31, 23, 59, 58)


class _Skipped(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def reason(self) -> str: ...


@attrs.frozen
class ManifestFile:
    """One entry as the manifest lists it."""

    path: str
    size: int
    sha256: str
    mtime: int


def zip_date(mtime: float) -> tuple[int, int, int, int, int, int]:
    """``mtime`` as a zip date: local time, within 1980-01-01 .. 2107-12-31."""
    try:
        local = time.localtime(mtime)
    except (OverflowError, OSError, ValueError):
        return _ZIP_FIRST if mtime < 0 else _ZIP_LAST
    when = (local.tm_year, local.tm_mon, local.tm_mday, local.tm_hour, local.tm_min,
            local.tm_sec)
    return min(max(when, _ZIP_FIRST), _ZIP_LAST)


def unix_time_field(mtime: int) -> bytes:
    """The extended timestamp extra field holding ``mtime`` (b"" when it does not fit)."""
    if not _INT32[0] <= mtime <= _INT32[1]:
        return b""
    return struct.pack("<HHBi", _UT, 5, 1, mtime)


def usable_mtime(mtime: float | None, fallback: float) -> int:
    """``mtime`` in whole seconds, or ``fallback``'s when it is missing or not finite."""
    if mtime is None or not math.isfinite(mtime):
        mtime = fallback
    return math.floor(mtime)


def entry_info(path: str, mtime: int) -> zipfile.ZipInfo:
    """A deflated, ``0644`` entry for ``path`` stamped with ``mtime`` (both fields)."""
    info = zipfile.ZipInfo(path, date_time=zip_date(mtime))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    info.extra = unix_time_field(mtime)
    return info


class ManifestWriter:
    """Writes entries into an open zip and lists each one for the manifest."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self.archive = archive
        self.files: list[ManifestFile] = []

    def add(self, path: str, data: bytes, mtime: int) -> None:
        """Write ``data`` as the entry ``path`` stamped ``mtime``, and list it."""
        self.archive.writestr(entry_info(path, mtime), data)
        self.files.append(ManifestFile(path, len(data), hashlib.sha256(data).hexdigest(),
                                       mtime))

    def finish(self, *, vault_id: str, written_at: _dt.datetime, history: bool,
               skipped: Sequence[_Skipped]) -> None:
        """Write the manifest, the zip's last entry (stamped ``written_at``)."""
        body: dict[str, Any] = {
            "format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "vault_id": vault_id,
            "written_at": written_at.isoformat(timespec="seconds"), "history": history,
            "files": [attrs.asdict(f) for f in self.files],
            "skipped": [{"path": _shown(s.path), "reason": s.reason} for s in skipped],
        }
        data = json.dumps(body, ensure_ascii=False, indent=1).encode("utf-8") + b"\n"
        self.archive.writestr(entry_info(MANIFEST_NAME, math.floor(written_at.timestamp())),
                              data)


def _shown(path: str) -> str:
    """``path`` as UTF-8 can hold it (a name that is not UTF-8 with its bytes as ``\\xNN``)."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def read_manifest(data: bytes) -> tuple[dict[str, ManifestFile], str]:
    """The files a manifest lists (by path) and its vault id; ``ValueError`` saying why
    when ``data`` is not a manifest this version reads."""
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the manifest is not JSON ({exc})") from None
    if not isinstance(body, dict) or body.get("format") != MANIFEST_FORMAT:
        raise ValueError("the manifest is not an echo-memory backup manifest")
    if body.get("version") != MANIFEST_VERSION:
        raise ValueError(f"manifest version {body.get('version')!r} is not one this "
                         f"echo-memory reads ({MANIFEST_VERSION}); verify with a newer one")
    listed: dict[str, ManifestFile] = {}
    try:
        for row in body["files"]:
            entry = ManifestFile(str(row["path"]), int(row["size"]), str(row["sha256"]),
                                 int(row.get("mtime", 0)))
            listed[entry.path] = entry
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"the manifest's file list is damaged ({exc!r})") from None
    return listed, str(body.get("vault_id", ""))
