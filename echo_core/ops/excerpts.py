"""Excerpts for recall hits and packing them into a character budget (SPEC §3.1)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from echo_core.frontmatter import split_frontmatter
from echo_core.models import Hit
from echo_core.protocols import Tokenizer

_LINK_ONLY = re.compile(r"[-*]?\s*(\[\[[^\]]+\]\][\s,]*)+")
EXCERPT_CHARS = 320
MIN_PIECE = 40
TRUNCATION_MARK = "…"


def excerpt(text: str, query_terms: set[str], tokenizer: Tokenizer, max_chars: int = EXCERPT_CHARS) -> str:
    """The passage of the note body that best matches the query: the line with the most
    distinct query terms (ties: earliest), extended with following lines to ``max_chars``."""
    body = split_frontmatter(text)[1]
    lines = [line.strip() for line in body.splitlines()]
    lines = [line for line in lines
             if line and not line.startswith("#") and line != "---" and not _LINK_ONLY.fullmatch(line)]
    if not lines:
        return ""
    best, best_score = 0, -1
    for i, line in enumerate(lines):
        score = len(query_terms.intersection(tokenizer.tokenize(line))) if query_terms else 0
        if score > best_score:
            best, best_score = i, score
    out = lines[best]
    for line in lines[best + 1:]:
        if len(out) + 1 + len(line) > max_chars:
            break
        out = f"{out} {line}"
    if len(out) > max_chars:
        out = out[: max_chars - 1].rstrip() + TRUNCATION_MARK
    return out


@attrs.frozen
class Packed:
    """Hits that fit the budget, how many were dropped, and whether any was cut."""

    hits: tuple[Hit, ...]
    dropped: int
    truncated: bool


def pack(hits: Sequence[Hit], budget_chars: int) -> Packed:
    """Keep hits by descending score while their excerpts fit ``budget_chars``; the first
    that does not fit is cut (marked ``truncated``) if at least ``MIN_PIECE`` characters
    remain; the rest are dropped."""
    kept: list[Hit] = []
    used = 0
    truncated = False
    ordered = sorted(hits, key=lambda h: -h.score)
    for n, hit in enumerate(ordered):
        room = budget_chars - used
        if len(hit.excerpt) <= room:
            kept.append(hit)
            used += len(hit.excerpt)
            continue
        if room >= MIN_PIECE:
            cut = hit.excerpt[: room - 1].rstrip() + TRUNCATION_MARK
            kept.append(attrs.evolve(hit, excerpt=cut, truncated=True))
            truncated = True
            n += 1
        else:
            truncated = True
        return Packed(tuple(kept), len(ordered) - n, truncated)
    return Packed(tuple(kept), 0, truncated)
