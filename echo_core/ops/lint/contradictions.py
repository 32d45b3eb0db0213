"""Candidate contradictions among what the memory holds as true: the ``## Fact /
Pattern`` lines of semantic notes and the preference lines of the operator
preferences (both sections).

Each line is read as claims (``echo_core.ops.claims``); two lines are a candidate when
they make claims of opposite polarity on the same subject. A struck line (``~~old~~``)
is no claim. Grouping by subject keeps it linear; at most ``MAX_PAIRS_PER_SUBJECT``
pairs are reported for one subject.
"""

from __future__ import annotations

from collections.abc import Iterator

from echo_core.notes import section_body
from echo_core.ops.claims import claims
from echo_core.ops.lint.model import Finding
from echo_core.ops.lint.snapshot import VaultSnapshot

PREFERENCES = "_agent/memory/semantic/operator-preferences.md"
FACT_HEADING = "Fact / Pattern"
MAX_PAIRS_PER_SUBJECT = 5


def _claim_lines(snap: VaultSnapshot) -> Iterator[tuple[str, str]]:
    """``(path, line)`` of every bullet that may hold a claim."""
    for path, kind in snap.kinds.items():
        if kind != "semantic":
            continue
        text = snap.notes[path].text
        sections = [section_body(text, FACT_HEADING) or ""]
        if path == PREFERENCES:
            sections.append(section_body(text, "Observations") or "")
        for body in sections:
            for line in body.splitlines():
                stripped = line.strip()
                if stripped.startswith(("- ", "* ", "+ ")) and "~~" not in stripped:
                    yield path, stripped


def check_contradictions(snap: VaultSnapshot) -> Iterator[Finding]:
    """One finding per pair of lines with opposite claims on one subject."""
    by_subject: dict[frozenset[str], dict[int, list[tuple[str, str]]]] = {}
    for path, line in _claim_lines(snap):
        for subject, polarity in claims(line):
            sides = by_subject.setdefault(subject, {1: [], -1: []})
            if (path, line) not in sides[polarity]:
                sides[polarity].append((path, line))
    reported: set[tuple[tuple[str, str], tuple[str, str]]] = set()
    for subject, sides in by_subject.items():
        pairs = [(a, b) for a in sides[1] for b in sides[-1] if a != b]
        for a, b in pairs[:MAX_PAIRS_PER_SUBJECT]:
            first, second = sorted((a, b))
            if (first, second) in reported:
                continue
            reported.add((first, second))
            where = "" if first[0] == second[0] else f" in {second[0]}"
            yield Finding("contradiction", first[0],
                          f"{first[1]!r} and {second[1]!r}{where} disagree about "
                          f"{' '.join(sorted(subject))!r}",
                          "keep the one that holds: strike the other "
                          "(`~~old~~ (superseded YYYY-MM-DD)`) or say when each applies",
                          other=second[0] if second[0] != first[0] else "")
