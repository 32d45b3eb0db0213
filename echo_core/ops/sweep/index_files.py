"""Reading the vault's entity index leniently, and setting a damaged file aside.

The full sweep rebuilds the entity index from the notes; the old index only lends its
slugs (a path already indexed keeps its slug). ``read_old_index`` therefore salvages
every entry it can and says which file is damaged and why: a snapshot that is not UTF-8,
not JSON, not an index's shape (no integer ``schema_version``, ``entities`` not a
mapping) or holds malformed entries; a journal with unreadable lines (other than a torn
last line, which a crash leaves and which means nothing). A snapshot of a newer schema is
an error (78): this echo-memory must not rewrite it.

``set_aside(storage, path, stamp)`` copies a damaged file to
``<path>.corrupt-<stamp>`` next to it (never deleting anything; the rebuilt index then
replaces the original). The storage writes text, so bytes that are not UTF-8 are kept
as ``\\xNN`` escapes in the copy.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from echo_core.entities import (
    JOURNAL_PATH,
    SCHEMA_VERSION,
    SNAPSHOT_PATH,
    EntityIndex,
    apply_journal_record,
    entity_from_json,
    journal_record,
)
from echo_core.errors import EchoError, ExitCode, NotConfiguredError
from echo_core.protocols import BackendUnavailable, Storage


@attrs.frozen
class OldIndex:
    """The entries salvaged from the stored index, and its damaged files: path -> why.
    ``missing``: there was no snapshot at all."""

    index: EntityIndex
    damaged: dict[str, str]
    missing: bool = False
    journal_lines: int = 0

    @property
    def clean(self) -> bool:
        """A readable snapshot and an empty journal: nothing to rewrite for its own sake."""
        return not self.damaged and not self.missing and not self.journal_lines


def raw_text(storage: Storage, path: str) -> tuple[str | None, bool]:
    """The file's text (None when absent) and whether it was valid UTF-8 (bytes that
    are not are escaped as ``\\xNN``, so nothing is lost from sight)."""
    read_bytes = getattr(storage, "read_bytes", None)
    try:
        if callable(read_bytes):
            data: bytes = read_bytes(path)
            try:
                return data.decode("utf-8"), True
            except UnicodeDecodeError:
                return data.decode("utf-8", "backslashreplace"), False
        return storage.read(path), True
    except BackendUnavailable:
        raise
    except EchoError as exc:
        if exc.code == ExitCode.NOT_FOUND:
            return None, True
        return f"(unreadable: {exc.message})", False
    except UnicodeError:
        return "(not UTF-8)", False


def _snapshot_entries(text: str) -> tuple[dict[str, Any], str]:
    """The entries of a snapshot's text and what is wrong with its shape ("" if fine)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, f"not valid JSON ({exc})"
    if not isinstance(data, dict):
        return {}, f"not an entity index (a JSON {type(data).__name__}, not an object)"
    version = data.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise NotConfiguredError(f"{SNAPSHOT_PATH} has schema_version {version}; this "
                                 f"echo-memory reads {SCHEMA_VERSION}. Upgrade echo-memory.")
    if not isinstance(version, int) or isinstance(version, bool):
        return {}, f"not an entity index (schema_version {version!r})"
    entities = data.get("entities", {})
    if not isinstance(entities, dict):
        return {}, "not an entity index (entities is not a mapping)"
    return entities, ""


def _salvage(index: EntityIndex, entries: dict[str, Any]) -> int:
    """Put every well-formed entry; the number of malformed ones."""
    bad = 0
    for slug, raw in entries.items():
        try:
            index.put(entity_from_json(str(slug), raw))
        except (EchoError, AttributeError):
            bad += 1
    return bad


def _replay_journal(index: EntityIndex, text: str) -> int:
    """Replay the journal's lines; the number of unreadable ones (a torn last line is
    not counted: a crash mid-append leaves it)."""
    lines = [line for line in text.splitlines() if line.strip()]
    bad = 0
    for number, line in enumerate(lines, 1):
        try:
            record = journal_record(line)
        except (EchoError, KeyError, TypeError, AttributeError):
            bad += 1
            continue
        if record is None:
            if number < len(lines) and not _marks_op(line):
                bad += 1
            continue
        apply_journal_record(index, record)
    return bad


def _marks_op(line: str) -> bool:
    """A line of a known kind that changes no entry (an op id mark)."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return False
    return isinstance(record, dict) and record.get("op") == "mark"


def read_old_index(storage: Storage) -> OldIndex:
    """The stored index as far as it can be read (module docstring)."""
    index = EntityIndex()
    damaged: dict[str, str] = {}
    snapshot, utf8 = raw_text(storage, SNAPSHOT_PATH)
    if snapshot is not None:
        entries, problem = _snapshot_entries(snapshot) if utf8 else ({}, "not UTF-8")
        bad = _salvage(index, entries)
        if bad:
            problem = f"{bad} malformed entr{'y' if bad == 1 else 'ies'}"
        if problem:
            damaged[SNAPSHOT_PATH] = problem
    journal, utf8 = raw_text(storage, JOURNAL_PATH)
    if journal:
        bad = _replay_journal(index, journal) if utf8 else 1
        if bad or not utf8:
            damaged[JOURNAL_PATH] = ("not UTF-8" if not utf8 else
                                     f"{bad} unreadable line{'s' if bad > 1 else ''}")
    lines = sum(1 for line in (journal or "").splitlines() if line.strip())
    return OldIndex(index, damaged, missing=snapshot is None, journal_lines=lines)


def aside_path(storage: Storage, path: str, stamp: str) -> str:
    """A free name ``<path>.corrupt-<stamp>`` (``-2``, ``-3``... when taken)."""
    target, n = f"{path}.corrupt-{stamp}", 1
    while storage.exists(target):
        n += 1
        target = f"{path}.corrupt-{stamp}-{n}"
    return target


def set_aside(storage: Storage, path: str, target: str) -> None:
    """Copy the damaged file at ``path`` to ``target`` (the caller then replaces it)."""
    text, _utf8 = raw_text(storage, path)
    storage.write(target, text or "")
