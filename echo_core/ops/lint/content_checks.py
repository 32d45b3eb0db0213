"""What notes say: a scope not renewed for several sessions (SPEC §4.2) and semantic
notes whose Observations outgrew their budget (SPEC §2.7)."""

from __future__ import annotations

from collections.abc import Iterator

from echo_core.notes import section_body
from echo_core.ops.lint.model import Finding
from echo_core.ops.lint.snapshot import VaultSnapshot
from echo_core.ops.scope import CONTEXT_PATH, SESSIONS_DIR, count_sessions_since

STALE_AFTER_SESSIONS = 3
MAX_OBSERVATIONS = 30
_BULLETS = ("- ", "* ", "+ ")


def check_stale_scope(snap: VaultSnapshot) -> Iterator[Finding]:
    """``STALE_AFTER_SESSIONS`` or more session logs since ``scope_updated`` (counted
    as ``scope show`` counts them)."""
    note = snap.notes.get(CONTEXT_PATH)
    if note is None:
        return
    stamp = note.frontmatter.get("scope_updated")
    sessions = [p for p in snap.notes if p.startswith(SESSIONS_DIR + "/")]
    count = count_sessions_since(sessions, "" if stamp is None else str(stamp))
    if count >= STALE_AFTER_SESSIONS:
        yield Finding("stale-scope", CONTEXT_PATH,
                      f"{count} sessions logged since the scope was set ({stamp})",
                      'check it with `echo-memory scope show`; renew it with '
                      '`echo-memory scope set "..."`')


def observation_count(text: str) -> int:
    """How many bullet items sit under ``## Observations``."""
    body = section_body(text, "Observations") or ""
    return sum(1 for line in body.splitlines() if line.lstrip().startswith(_BULLETS))


def check_observations(snap: VaultSnapshot) -> Iterator[Finding]:
    """A semantic note with more than ``MAX_OBSERVATIONS`` items under Observations."""
    for path, kind in snap.kinds.items():
        if kind != "semantic" or "## Observations" not in snap.notes[path].text:
            continue
        count = observation_count(snap.notes[path].text)
        if count > MAX_OBSERVATIONS:
            yield Finding("observations-overflow", path,
                          f"{count} Observations (more than {MAX_OBSERVATIONS})",
                          "fold what still holds into the note's text and move the "
                          "oldest items to _agent/memory/episodic/"
                          "observations-archive-YYYY.md")
