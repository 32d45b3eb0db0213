"""A per-note quality score, 0..1, for every entity note: information for a person
tending the vault, never a violation.

Parts (their weights sum to 1): frontmatter complete for the kind (0.3), a body beyond
the title and empty headings (0.3), links in or out (0.2), freshness of ``updated``
(0.2: full when updated today, falling linearly to 0 at ``STALE_DAYS``).
"""

from __future__ import annotations

import re

from echo_core.frontmatter_dates import as_date
from echo_core.ops.lint.model import QualityScore
from echo_core.ops.lint.snapshot import VaultSnapshot

WEIGHTS = {"frontmatter": 0.3, "body": 0.3, "links": 0.2, "freshness": 0.2}
STALE_DAYS = 365
LOWEST_SHOWN = 5
_TEXT_LINE_RE = re.compile(r"^[ \t]*[^\s#]", re.MULTILINE)


def has_body(body: str) -> bool:
    """Whether the body holds text besides headings."""
    return _TEXT_LINE_RE.search(body) is not None


def score_note(path: str, kind: str, snap: VaultSnapshot) -> QualityScore:
    """The score of the entity note at ``path`` (of ``kind``)."""
    note = snap.notes[path]
    complete = note.frontmatter_error is None and not snap.missing(path)
    linked = bool(snap.links.get(path)) or path in snap.linked_to
    updated = as_date(note.frontmatter.get("updated"))
    age = (snap.today - updated).days if updated is not None else STALE_DAYS
    fresh = max(0.0, min(1.0, 1 - age / STALE_DAYS))
    parts = {"frontmatter": WEIGHTS["frontmatter"] if complete else 0.0,
             "body": WEIGHTS["body"] if has_body(note.body) else 0.0,
             "links": WEIGHTS["links"] if linked else 0.0,
             "freshness": round(WEIGHTS["freshness"] * fresh, 3)}
    return QualityScore(path, round(sum(parts.values()), 3), **parts)


def quality_scores(snap: VaultSnapshot) -> tuple[QualityScore, ...]:
    """Every entity note's score, by path."""
    return tuple(score_note(path, kind, snap) for path, kind in sorted(snap.kinds.items()))


def lowest(scores: tuple[QualityScore, ...], count: int = LOWEST_SHOWN) -> list[QualityScore]:
    """The ``count`` lowest scores below 1 (ties by path)."""
    return sorted((s for s in scores if s.score < 1), key=lambda s: (s.score, s.path))[:count]
