"""Excerpts for recall hits and packing them into a character budget (SPEC §3.1).

An excerpt is the best-matching line of a note, from the first matched word (with a little
lead-in) when that word lies past the excerpt size, extended with the following lines. An
excerpt cut at its start begins with ``…``, one cut at its end ends with ``…``, and a cut
never splits a visible character: a base character keeps its combining marks, variation
selectors and emoji modifiers, and a zero-width-joiner sequence or a flag stays whole
(``safe_cut``; the standard library's ``unicodedata``, no grapheme dependency).
"""

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
#: Characters of lead-in kept before the first matched word when the excerpt starts
#: inside its line (1/``LEAD_SHARE`` of the excerpt size).
LEAD_SHARE = 4
_ZWJ = "\u200d"


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
    with following lines to at most ``max_chars`` characters.

    When the first matched word of that line (``term_position``) would not fit in
    ``max_chars`` from the line's start, the excerpt starts about 1/``LEAD_SHARE`` of
    ``max_chars`` before it, at a word start, behind ``…``. A longer text is cut at a
    grapheme-safe point (``safe_cut``) and ends with ``…``."""
    if not lines:
        return ""
    best, matched = 0, 0
    if query_terms:
        best_score, most = 0, len(query_terms)
        for i in range(min(len(lines), SCAN_LINES)):
            score = len(query_terms.intersection(line_terms(i)))
            if score > best_score:
                best, best_score = i, score
                if score == most:
                    break
        matched = best_score
    out = lines[best]
    if matched and len(out) >= max_chars:
        out = _from_first_match(out, query_terms.intersection(line_terms(best)), max_chars)
    for line in lines[best + 1:]:
        if len(out) + 1 + len(line) > max_chars:
            break
        out = f"{out} {line}"
    if len(out) > max_chars:
        out = out[: safe_cut(out, max_chars - 1)].rstrip() + TRUNCATION_MARK
    return out


def _from_first_match(line: str, terms: Collection[str], max_chars: int) -> str:
    """``line`` from a little before its first word holding one of ``terms``, behind
    ``…``; the whole line when that word ends within ``max_chars - 1`` characters or
    none is found."""
    spans = [span for term in terms if (span := term_position(line, term)) is not None]
    if not spans:
        return line
    first, end = min(spans)
    if end <= max_chars - 1:
        return line
    # the lead-in, or more when the line ends soon after: the window is filled
    start = max(0, min(first - max_chars // LEAD_SHARE, len(line) - max_chars + 1))
    space = line.find(" ", start, first)
    if space >= 0:
        start = space + 1
    else:  # no word break in the lead-in (e.g. CJK): any point not inside a character
        while 0 < start < first and _extends(line, start):
            start += 1
    return TRUNCATION_MARK + line[start:] if start else line


def term_position(line: str, term: str) -> tuple[int, int] | None:
    """Where (start, end) in ``line`` the first word that ``term`` (a tokenizer's term)
    probably comes from lies: a word starting with the term, else with the term but for
    its last character (a stemmer's term is a word's start but for its last character:
    "penalti" from "penalty"), case ignored; None when no word does. A heuristic: a
    term a tokenizer rewrote ("went" -> "go") is not found."""
    lowered = line.lower()
    for head in (term, term[:-1]) if len(term) > 3 else (term,):
        at = lowered.find(head)
        while at >= 0:
            if at == 0 or not lowered[at - 1].isalnum():  # a word starts here
                end = at + len(head)
                while end < len(line) and line[end].isalnum():
                    end += 1
                return at, end
            at = lowered.find(head, at + 1)
    return None


def _extends(text: str, i: int) -> bool:
    """Whether ``text[i]`` belongs with the character before it (cutting between them
    would split what is seen as one character)."""
    ch, before = text[i], text[i - 1]
    if ch < "\u0300" and before != _ZWJ:  # ASCII and Latin-1 never extend a character
        return False
    if before == _ZWJ or ch == _ZWJ:
        return True
    code = ord(ch)
    if (0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF  # variation selectors
            or 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F):  # skin, tags
        return True
    if 0x1F1E6 <= code <= 0x1F1FF and 0x1F1E6 <= ord(before) <= 0x1F1FF:  # a flag's pair
        run = 0
        while i - 1 - run >= 0 and 0x1F1E6 <= ord(text[i - 1 - run]) <= 0x1F1FF:
            run += 1
        return run % 2 == 1
    import unicodedata  # only for non-Latin text: not at import (cold path)

    return bool(unicodedata.combining(ch)) or unicodedata.category(ch) in ("Mn", "Mc", "Me")


def safe_cut(text: str, at: int) -> int:
    """The largest position <= ``at`` where ``text`` may be cut without splitting a
    visible character (``_extends``); 0 when there is none."""
    at = min(at, len(text))
    while 0 < at < len(text) and _extends(text, at):
        at -= 1
    return at


def body_excerpt(body: str, query_terms: set[str], tokenizer: Tokenizer,
                 max_chars: int = EXCERPT_CHARS) -> str:
    """The passage of ``body`` (a note without its frontmatter) that best matches the
    query: ``best_passage`` over its ``content_lines``, each line tokenized."""
    lines = content_lines(body, max_chars)
    return best_passage(lines, query_terms, lambda i: tokenizer.tokenize(lines[i]), max_chars)


def was_cut(excerpt: str) -> bool:
    """Whether ``excerpt`` (from ``best_passage`` or ``pack``) was cut: it starts or ends
    with ``TRUNCATION_MARK``. (A line that itself ends with "…" reads as cut too.)"""
    return excerpt.startswith(TRUNCATION_MARK) or excerpt.endswith(TRUNCATION_MARK)


@attrs.frozen
class Packed:
    """Hits that fit the budget, how many were dropped, and whether the budget cut an
    excerpt or left a hit out."""

    hits: tuple[Hit, ...]
    dropped: int
    truncated: bool


def pack(hits: Sequence[Hit], budget_chars: int) -> Packed:
    """Keep hits by descending score while their excerpts fit ``budget_chars``; the first
    that does not fit is cut (at a grapheme-safe point, ``safe_cut``) if at least
    ``MIN_PIECE`` characters remain; the rest are dropped. Every kept hit whose excerpt
    was cut, here or when it was made (``was_cut``), is marked ``truncated``."""
    kept: list[Hit] = []
    used = 0
    truncated = False
    ordered = sorted(hits, key=lambda h: -h.score)
    for n, hit in enumerate(ordered):
        room = budget_chars - used
        if len(hit.excerpt) <= room:
            kept.append(attrs.evolve(hit, truncated=True) if was_cut(hit.excerpt) else hit)
            used += len(hit.excerpt)
            continue
        if room >= MIN_PIECE:
            cut = hit.excerpt[: safe_cut(hit.excerpt, room - 1)].rstrip() + TRUNCATION_MARK
            kept.append(attrs.evolve(hit, excerpt=cut, truncated=True))
            truncated = True
            n += 1
        else:
            truncated = True
        return Packed(tuple(kept), len(ordered) - n, truncated)
    return Packed(tuple(kept), 0, truncated)
