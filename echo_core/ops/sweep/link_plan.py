"""Missing reciprocal links (SPEC §1.3, §2.4): for each ``## Related`` link from entity
note A to entity note B, B must link back to A (``ops.links.add_related`` adds the line
under B's ``## Related`` unless B already links A anywhere).

A link names a note by its file stem (``[[ada-lovelace]]``) or by its vault path without
``.md``; a stem that names several notes is ambiguous and left alone. As when capture
links notes, a note that does not expire never collects a link to one that does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from echo_core.ops.links import link_target
from echo_core.ops.sweep.note_facts import NoteFacts


def _stem_index(notes: Mapping[str, NoteFacts]) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """stem -> path, and casefolded stem -> path (None where several notes share it)."""
    exact: dict[str, str | None] = {}
    folded: dict[str, str | None] = {}
    for path in notes:
        stem = link_target(path)
        exact[stem] = None if stem in exact else path
        key = stem.casefold()
        folded[key] = None if key in folded else path
    return exact, folded


def _resolve(target: str, notes: Mapping[str, NoteFacts], exact: dict[str, str | None],
             folded: dict[str, str | None]) -> str | None:
    if "/" in target:
        path = target if target.endswith(".md") else f"{target}.md"
        return path if path in notes else None
    stem = target.removesuffix(".md")
    if stem in exact:
        return exact[stem]
    return folded.get(stem.casefold())


def missing_backlinks(notes: Mapping[str, NoteFacts]) -> dict[str, list[str]]:
    """Entity note B -> the entity notes A (sorted) whose ``## Related`` links B while B
    does not link A."""
    entity_notes = {p: f for p, f in notes.items() if f.entity is not None}
    exact, folded = _stem_index(entity_notes)
    wanted: dict[str, set[str]] = defaultdict(set)
    for a_path, a in entity_notes.items():
        for target in a.related:
            b_path = _resolve(target, entity_notes, exact, folded)
            if b_path is None or b_path == a_path:
                continue
            b = entity_notes[b_path]
            if link_target(a_path) in b.links or (a.expires and not b.expires):
                continue
            wanted[b_path].add(a_path)
    return {b: sorted(a_paths) for b, a_paths in sorted(wanted.items())}
