"""Excerpts for recall hits and packing them into a character budget (SPEC §3.1)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import attrs

from echo_core.frontmatter import split_frontmatter
from echo_core.lazy_pattern import LazyPattern
from echo_core.models import Hit
from echo_core.protocols import Tokenizer

_LINK_ONLY = LazyPattern(r"[-*]?\s*(\[\[[^\]]+\]\][\s,]*)+")
EXCERPT_CHARS = 320
MIN_PIECE = 40
TRUNCATION_MARK = "…"


#: Lines of a body scanned for the best passage (a longer note's excerpt comes from its
#: first ``SCAN_LINES`` content lines: tokenizing every line of a huge note per hit costs
#: more than the rest of recall).
SCAN_LINES = 200


def excerpt(text: str, query_terms: set[str], tokenizer: Tokenizer, max_chars: int = EXCERPT_CHARS) -> str:
    """The passage of the note body that best matches the query (see ``body_excerpt``)."""
    return body_excerpt(split_frontmatter(text)[1], query_terms, tokenizer, max_chars)


def content_lines(body: str, max_chars: int = EXCERPT_CHARS) -> list[str]:
    """The stripped lines of ``body`` an excerpt may use: not blank, not a heading, not a
    ``---`` rule, not a line of bare wikilinks; enough of them to extend any of the first
    ``SCAN_LINES`` to ``max_chars``."""
    lines = []
    for raw in body.splitlines():
        line = raw.strip()
        if line and not line.startswith("#") and line != "---" and not (
                "[[" in line and _LINK_ONLY.fullmatch(line)):
            lines.append(line)
            if len(lines) >= SCAN_LINES + max_chars:
                break
    return lines


def best_passage(lines: Sequence[str], query_terms: set[str],
                 line_terms: Callable[[int], Collection[str]],
                 max_chars: int = EXCERPT_CHARS) -> str:
    """The line of ``lines`` (from ``content_lines``) with the most distinct query terms
    (``line_terms(i)`` gives line i's terms; ties: earliest; only the first
    ``SCAN_LINES`` are scored, and scoring stops at a line holding every term), extended
    with following lines to ``max_chars`` (a longer cut ends with ``…``)."""
    if not lines:
        return ""
    best = 0
    if query_terms:
        best_score, most = 0, len(query_terms)
        for i in range(min(len(lines), SCAN_LINES)):
            score = len(query_terms.intersection(line_terms(i)))
            if score > best_score:
                best, best_score = i, score
                if score == most:
                    break
    out = lines[best]
    for line in lines[best + 1:]:
        if len(out) + 1 + len(line) > max_chars:
            break
        out = f"{out} {line}"
    if len(out) > max_chars:
        out = out[: max_chars - 1].rstrip() + TRUNCATION_MARK
    return out


def body_excerpt(body: str, query_terms: set[str], tokenizer: Tokenizer,
                 max_chars: int = EXCERPT_CHARS) -> str:
    """The passage of ``body`` (a note without its frontmatter) that best matches the
    query: ``best_passage`` over its ``content_lines``, each line tokenized."""
    lines = content_lines(body, max_chars)
    return best_passage(lines, query_terms, lambda i: tokenizer.tokenize(lines[i]), max_chars)


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
