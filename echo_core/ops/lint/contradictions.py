"""Candidate contradictions among what the memory holds as true: the ``## Fact /
Pattern`` lines of semantic notes and the preference lines of the operator
preferences (both sections).

Each line is read as claims ``(subject, polarity)``: "always X", "use X", "do X",
"prefer X" are for X; "never X", "avoid X", "don't X", "do not X", "stop X" against
it; "prefer X over Y" (or "X instead of Y", "rather than Y") is for X and against Y.
The subject is the next few meaningful words, up to a clause break (punctuation,
"when", "because", "if", ...), with stopwords, digits and single letters dropped and
plurals folded. Two lines
are a candidate when they make claims of opposite polarity on the same subject. A
struck line (``~~old~~``) is no claim. Grouping by subject keeps it linear; at most
``MAX_PAIRS_PER_SUBJECT`` pairs are reported for one subject.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from echo_core.names import name_tokens, words
from echo_core.notes import section_body
from echo_core.ops.lint.model import Finding
from echo_core.ops.lint.snapshot import VaultSnapshot

PREFERENCES = "_agent/memory/semantic/operator-preferences.md"
FACT_HEADING = "Fact / Pattern"
MAX_SUBJECT_WORDS = 4
MAX_PAIRS_PER_SUBJECT = 5
_FOR = {"always", "use", "uses", "prefer", "prefers", "do", "favour", "favor"}
_AGAINST = {"never", "avoid", "avoids", "stop", "dont"}
_FILLER = {"use", "using", "uses", "do", "to", "always", "never", "please", "the", "a",
           "an", "we", "you", "i", "should", "must"}
_SWITCH = {"over", "instead", "rather", "than", "not"}
_BREAK = {"when", "because", "if", "unless", "since", "so", "but", "and", "while",
          "for", "in", "on", "with", "as", "after", "before"}
_CLAUSE_RE = re.compile(r"[.,;:!?()\[\]—–]")
_LINK_RE = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}:?\s*")

#: One claim: the subject's tokens and +1 (for) / -1 (against).
Claim = tuple[frozenset[str], int]


def _clean(line: str) -> str:
    text = line.strip()[2:].strip()
    text = _DATE_RE.sub("", text)
    text = _LINK_RE.sub(lambda m: m.group(2) or m.group(1), text)
    return re.sub(r"\b(do|does|did)\s*n[o']?t\b", "dont", text, flags=re.IGNORECASE)


def _subject(parts: list[str]) -> frozenset[str]:
    kept: list[str] = []
    for word in parts:
        if word in _BREAK or word in _SWITCH or len(kept) >= MAX_SUBJECT_WORDS:
            break
        if word not in _FILLER:
            kept.append(word)
    return frozenset(t for t in name_tokens(" ".join(kept)) if len(t) > 1 and not t.isdigit())


def claims(line: str) -> list[Claim]:
    """The claims of one bullet line (see the module docstring); none for a line with
    no polarity word."""
    text = _clean(line)
    clause = _CLAUSE_RE.split(text, maxsplit=1)[0]
    parts = [w.replace("'", "") for w in words(clause.replace("n't", "nt"))]
    for i, word in enumerate(parts):
        polarity = 1 if word in _FOR else -1 if word in _AGAINST else 0
        if not polarity:
            continue
        rest = parts[i + 1:]
        if rest and rest[0] in _AGAINST:  # "always avoid X", "do never X"
            polarity, rest = -polarity, rest[1:]
        found: list[Claim] = []
        subject = _subject(rest)
        if subject:
            found.append((subject, polarity))
        for j, later in enumerate(rest):
            if later in ("over", "than") or (later == "instead" and rest[j + 1:j + 2] == ["of"]):
                other = _subject([w for w in rest[j + 1:] if w != "of"])
                if other:
                    found.append((other, -polarity))
                break
        return found
    return []


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
