"""Frontmatter a note of its kind should carry (and a block that can be read, with
each key once, and a working note's ``expires`` and ``status`` that decay can read),
and working notes past their ``expires`` (SPEC §1.2, §2.7). Missing keys and expiry are
mechanical: ``lint --fix`` sets the keys, and archives an expired working note exactly
as ``sweep --decay`` does (``status: archived``, never ``expired``: the two verbs agree
on every note, whichever runs first)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from echo_core.frontmatter import split_frontmatter
from echo_core.ops.lint.model import Finding, Repair
from echo_core.ops.lint.snapshot import VaultSnapshot
from echo_core.ops.sweep.decay_working import archive_due
from echo_core.yaml_bounded import duplicate_keys

#: The status an older ``lint --fix`` set (decay archives such a note like an active one).
OLD_EXPIRED_STATUS = "expired"


def check_incomplete_frontmatter(snap: VaultSnapshot) -> Iterator[Finding]:
    """An entity note lacking (or leaving empty) a key every note of its kind carries
    (type, status, created, updated, tags; a working note also expires). The repair
    adds each missing key, one line each, with the manifest's value (created/updated:
    the file's date). A block that cannot be parsed, and each key a block holds more
    than once (readers keep its last value; Obsidian calls the block invalid), are
    reported with their lines, not repaired; so is a working note's ``expires`` that is
    not a date (``2024-02-30``, ``02/01/2024``, a list) or ``status`` that is not one
    word (a list), which ``sweep --decay`` cannot read and never archives
    (``decay_working.unreadable_lifecycle``: the finding names the key, value and fix)."""
    for path, kind in snap.kinds.items():
        note = snap.notes[path]
        if note.frontmatter_error is not None:
            yield Finding("incomplete-frontmatter", path,
                          f"the frontmatter cannot be read ({note.frontmatter_error})",
                          "fix the YAML between the --- lines by hand (lint --fix "
                          "does not rewrite a block it cannot read)")
            continue
        yield from _duplicate_keys(path, note.text)
        if kind == "working":
            yield from _unreadable_lifecycle(path, note.frontmatter)
        missing = snap.missing(path)
        if not missing:
            continue
        keys = ", ".join(missing)
        yield Finding("incomplete-frontmatter", path, f"a {kind} note lacks {keys}",
                      "`echo-memory lint --fix --apply` adds them (one line each)",
                      repair=Repair(path, f"add {keys}", dict(missing)))


def _unreadable_lifecycle(path: str, fm: Mapping[str, Any]) -> Iterator[Finding]:
    """One finding per lifecycle key of a working note that decay cannot read."""
    from echo_core.ops.sweep.decay_working import unreadable_lifecycle  # decay's own rule

    for bad in unreadable_lifecycle(fm):
        yield Finding("incomplete-frontmatter", path, bad.says(), bad.fix)


def _duplicate_keys(path: str, text: str) -> Iterator[Finding]:
    """One finding per key the frontmatter block of ``text`` holds more than once."""
    for key, lines in duplicate_keys(split_frontmatter(text)[0] or "").items():
        at = ", ".join(map(str, lines[:-1])) + f" and {lines[-1]}"
        yield Finding("incomplete-frontmatter", path,
                      f"the frontmatter has the key {key!r} {len(lines)} times (lines "
                      f"{at}); only the last value is read",
                      f"merge the values into one {key!r} line by hand (Obsidian shows "
                      "the block as invalid properties)")


def check_expired_working(snap: VaultSnapshot) -> Iterator[Finding]:
    """A working note ``sweep --decay`` would archive (``decay_working.archive_due``: its
    ``expires`` before today, its status active, blank - the kind's status - or
    ``expired``, which an older ``lint --fix`` set). The repair archives it as decay
    does: ``status: archived`` and the body kept under ``## Archived <today>``."""
    route = snap.manifest.kinds.get("working")
    default = route.status if route is not None else "active"
    for path, kind in snap.kinds.items():
        if kind != "working":
            continue
        fm = snap.notes[path].frontmatter
        expires = archive_due(fm, snap.today, default)
        if expires is None:
            continue
        status = str(fm.get("status") or "").strip()
        now = (f"status is {status} (an older lint --fix set it), not archived"
               if status.casefold() == OLD_EXPIRED_STATUS
               else f"status is still {status or 'blank'}")
        yield Finding("expired-working-note", path,
                      f"expired on {expires.isoformat()} but {now}",
                      "`echo-memory lint --fix --apply` (or `echo-memory sweep --decay "
                      "--apply`) archives it: status: archived, the body kept under "
                      "## Archived",
                      repair=Repair(path, "archive: status: archived, the body under "
                                    f"## Archived {snap.today.isoformat()}", archive=True))
