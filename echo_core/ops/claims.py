"""Claims of a preference or fact line, for spotting contradictions (SPEC §2.6, §5.2).

Each bullet line is read as claims ``(subject, polarity)``: "always X", "use X", "do X",
"prefer X" are for X; "never X", "avoid X", "don't X", "do not X", "stop X" against
it; "prefer X over Y" (or "X instead of Y", "rather than Y") is for X and against Y.
The subject is the next few meaningful words, up to a clause break (punctuation,
"when", "because", "if", ...), with stopwords, digits and single letters dropped and
plurals folded. Two lines contradict when they make claims of opposite polarity on the
same subject. A struck line (``~~old~~``) is no claim (the callers skip it).
"""

from __future__ import annotations

import re

from echo_core.names import name_tokens, words

MAX_SUBJECT_WORDS = 4
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




def opposed(a: list[Claim], b: list[Claim]) -> frozenset[str] | None:
    """The subject on which claims ``a`` and ``b`` disagree, else None."""
    for subject, polarity in a:
        if (subject, -polarity) in b:
            return subject
    return None
