"""The record of an import under way, kept in the vault it writes into, so an import cut
short (killed, a full disk, the server gone) is visible and finished by running it again.

``RECORD_PATH`` (hidden, so no listing, export or recall sees it; in the vault, so every
machine sharing a PostgreSQL vault sees it) holds one JSON entry per unfinished import:
the folder it copies from, whether with ``--force``, when it started, and its host
tag and pid. ``begin`` adds the
entry before the import writes its first file and says whether one for the same folder
was there already (the import then resumes: it indexes every note of the folder, not
only those it writes now, since the run cut short may not have indexed its own);
``finish`` removes it after the last file is written and indexed (the record goes when
no entry is left).

``unfinished`` reads the entries for ``doctor`` (a failed check) and ``load`` (a line at
the top of the digest): "an import into this vault did not finish: run the same import
again", or, for an import whose process still runs on this host, that it is running. A
record that cannot be parsed counts as one unfinished import of an unknown folder, and
the next import that finishes replaces it.
"""

from __future__ import annotations

import json
import os
from typing import Any

import attrs

from echo_core.errors import EchoError, ExitCode
from echo_core.protocols import Storage
from echo_core.tempfiles import host_tag

RECORD_PATH = "_agent/.import-in-progress.json"


@attrs.frozen
class UnfinishedImport:
    """One import the record names: its ``source`` folder ("" when the record cannot be
    read), when it ``started``, the ``host`` tag and ``pid`` of its process, and whether
    it was given ``force`` (then so must its rerun be)."""

    source: str
    started: str = ""
    host: str = ""
    pid: int = 0
    force: bool = False

    def running(self) -> bool:
        """Whether its process still runs (on this host; another host's is not known)."""
        from echo_core.ops.transfer_staging import process_running

        return (self.host == host_tag() and self.pid != os.getpid()
                and process_running(self.pid))


def _parse(text: str) -> list[UnfinishedImport]:
    try:
        raw: Any = json.loads(text)
        return [UnfinishedImport(str(e["source"]), str(e.get("started", "")),
                                 str(e.get("host", "")), int(e.get("pid", 0)),
                                 bool(e.get("force", False)))
                for e in raw["imports"]]
    except (ValueError, TypeError, KeyError, AttributeError):
        return [UnfinishedImport("")]


def unfinished(storage: Storage) -> list[UnfinishedImport]:
    """The unfinished imports the vault's record names ([] when there is none). Errors:
    ``BackendUnavailable`` propagates; any other read failure counts as no record."""
    try:
        text = storage.read(RECORD_PATH)
    except EchoError as exc:
        if exc.code == ExitCode.UNAVAILABLE:
            raise
        return []
    return _parse(text)


def _save(storage: Storage, entries: list[UnfinishedImport]) -> None:
    if not entries:
        try:
            storage.delete(RECORD_PATH)
        except EchoError as exc:
            if exc.code != ExitCode.NOT_FOUND:
                raise
        return
    body = {"imports": [attrs.asdict(e) for e in entries]}
    storage.write(RECORD_PATH, json.dumps(body, indent=1, ensure_ascii=False) + "\n")


def begin(storage: Storage, source: str, started: str, *, force: bool = False) -> bool:
    """Record the import from ``source`` as under way (call under the vault lock, before
    its first write); True when an entry for ``source`` was there (a rerun)."""
    entries = [e for e in unfinished(storage) if e.source]
    resumed = any(e.source == source for e in entries)
    mine = UnfinishedImport(source, started, host_tag(), os.getpid(), force)
    _save(storage, [e for e in entries if e.source != source] + [mine])
    return resumed


def finish(storage: Storage, source: str) -> None:
    """Drop the entry of the import from ``source`` (and an unreadable record's)."""
    entries = unfinished(storage)
    if entries:
        _save(storage, [e for e in entries if e.source and e.source != source])


def unfinished_text(storage: Storage) -> str:
    """What ``load`` shows at the top of the digest: "" when no import is unfinished.
    Never raises (a load goes on without it)."""
    try:
        found = unfinished(storage)
    except EchoError:
        return ""
    return " ".join(": ".join(describe(e)) for e in found)


def describe(entry: UnfinishedImport) -> tuple[str, str]:
    """``(what, what to do)`` for one unfinished import."""
    forced = " --force" if entry.force else ""
    command = (f"`echo-memory import --from {entry.source}{forced}`" if entry.source
               else "the import")
    if entry.running():
        what = (f"an import into this vault is running now (pid {entry.pid}, from "
                f"{entry.source}, started {entry.started})")
        return what, f"wait for it to finish; if it is stopped, run {command} again"
    if not entry.source:
        what = (f"an import into this vault did not finish (its record {RECORD_PATH} "
                "cannot be read)")
        return what, "run the same import again; it finishes it and replaces the record"
    what = (f"an import into this vault did not finish (from {entry.source}, started "
            f"{entry.started}): some of its files may be missing, or written but not yet "
            "indexed")
    todo = (f"run the same import again: {command} (it keeps the files written and "
            "writes and indexes the rest)")
    return what, todo


def doctor_lines(storage: Storage) -> list[tuple[str, str, str]]:
    """``(status, detail, fix)`` per unfinished import for ``doctor``: fail, or warn for
    one running now. ``BackendUnavailable`` propagates."""
    return [("warn" if e.running() else "fail", *describe(e)) for e in unfinished(storage)]
