"""The entity index against the notes, both ways (SPEC §5.2): an entry whose note is
gone, an entity note with no entry, and an entry that disagrees with its note's kind,
title or aliases. Mechanical: the repair is ``index_sync.sync_paths`` on the path.

Lint reports the index as stored: it does not run the freshness check first, so a note
edited by hand a moment ago shows as drift that the next resolve, capture or recall (each
catching up first) would not meet; the finding says so rather than claiming they miss it."""

from __future__ import annotations

from collections.abc import Iterator

from echo_core.ops.lint.model import Finding, Repair
from echo_core.ops.lint.snapshot import SYSTEM_NOTES, VaultSnapshot
from echo_core.vault import ENTITY_INDEX_PATH

_FIX = "`echo-memory lint --fix --apply` makes the index agree with the note"


def _sync(path: str, change: str) -> Repair:
    return Repair(path, change, index_sync=True)


def check_index_drift(snap: VaultSnapshot) -> Iterator[Finding]:
    """See the module docstring; an unreadable index is one finding (not repaired)."""
    index = snap.index
    if index is None:
        yield Finding("index-drift", ENTITY_INDEX_PATH,
                      f"the entity index cannot be read: {snap.index_error}",
                      "restore _agent/index/ from a backup (`echo-memory backup` zips "
                      "hold it), or rebuild it from the notes with the full sweep")
        return
    for entity in sorted(index.entities.values(), key=lambda e: e.path):
        if entity.path not in snap.notes:
            yield Finding("index-drift", entity.path,
                          f"index entry {entity.slug!r} names a note that is gone", _FIX,
                          repair=_sync(entity.path, f"drop entry {entity.slug!r}"))
    for path, derived in snap.derived.items():
        stored = index.by_path(path)
        if stored is None:
            if path not in SYSTEM_NOTES:
                yield Finding("index-drift", path, f"a {derived.kind} note with no entry "
                              "in the entity index yet (an edit outside echo-memory: the "
                              "next command that reads the notes adds it)", _FIX,
                              repair=_sync(path, f"add entry {derived.slug!r}"))
            continue
        differs = [name for name, a, b in (
            ("kind", stored.kind, derived.kind), ("title", stored.title, derived.title),
            ("aliases", stored.aliases, derived.aliases)) if a != b]
        if differs:
            what = ", ".join(f"{name} {getattr(stored, name)!r} (note: "
                             f"{getattr(derived, name)!r})" for name in differs)
            yield Finding("index-drift", path, f"index entry {stored.slug!r} disagrees "
                          f"with the note: {what}", _FIX,
                          repair=_sync(path, f"update entry {stored.slug!r}"))
