"""Parsed views of the notes recall returns, memoised by their exact text.

A recall reads every hit's file (so an edit is always seen) but parsing it — frontmatter,
excerpt lines, wikilinks, the tokens of each line — is the same work every time the same
text comes back, and a long-lived process (the MCP server) recalls the same notes again
and again. ``NoteViews`` keys each view by the text itself, so a changed file is a new
key and a stale view can never be served; it keeps the most recently used views only.
Views hold tuples of strings, which the garbage collector stops tracking, so a full
memo adds little to a long-lived process's collections.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection

import attrs

from echo_core.corpus import aliases_text
from echo_core.frontmatter import parse_frontmatter, split_frontmatter
from echo_core.models import note_title
from echo_core.notes import wikilinks
from echo_core.ops.excerpts import EXCERPT_CHARS, best_passage, content_lines
from echo_core.protocols import TermFinder, Tokenizer, offers

#: Views kept (least recently used dropped first), the characters of text they may hold
#: together (a view holds its text and its lines: about twice that in memory), and the
#: longest text worth keeping.
MAX_VIEWS = 8192
MAX_TOTAL_CHARS = 8_000_000
MAX_VIEW_CHARS = 200_000


@attrs.define(eq=False)
class NoteView:
    """What recall needs from one note's text: three frontmatter fields, the excerpt
    lines, its path (the title of a note without a heading is its file stem), the
    wikilink targets (computed on first use), and each line's terms and the key fields'
    terms (likewise); for a
    ``TermFinder`` tokenizer, which of the last query's terms each line holds."""

    text: str
    type: str
    updated: str
    status: str
    lines: tuple[str, ...]
    path: str = ""
    _links: tuple[str, ...] | None = None
    _line_terms: dict[int, tuple[str, ...]] = attrs.field(factory=dict)
    _key_terms: frozenset[str] | None = None
    _among: tuple[frozenset[str], dict[int, Collection[str]]] | None = None

    def key_terms(self, tokenizer: Tokenizer) -> frozenset[str]:
        """The terms of the note's title and aliases (``recall_fields``), found and
        tokenized on first use (a ranker that keeps key fields never asks)."""
        if self._key_terms is None:
            self._key_terms = frozenset(tokenizer.tokenize(key_text(self.text, self.path)))
        return self._key_terms

    def links(self) -> tuple[str, ...]:
        """The note's wikilink targets (``notes.wikilinks``)."""
        if self._links is None:
            self._links = tuple(wikilinks(self.text))
        return self._links

    def excerpt(self, query_terms: set[str], tokenizer: Tokenizer,
                max_chars: int = EXCERPT_CHARS) -> str:
        """``excerpts.best_passage`` for ``query_terms``: each line tokenized at most once,
        or, for a ``TermFinder`` tokenizer, asked only which query terms it holds (a line
        tokenized before answers from its terms)."""
        if offers(tokenizer, TermFinder):
            finder: TermFinder = tokenizer  # type: ignore[assignment]
            asked = frozenset(query_terms)
            if self._among is None or self._among[0] != asked:
                self._among = (asked, {})
            known = self._among[1]

            def among(i: int) -> Collection[str]:
                found = self._line_terms.get(i) or known.get(i)
                if found is None:
                    found = known[i] = finder.terms_among(self.lines[i], asked)
                return found

            return best_passage(self.lines, query_terms, among, max_chars)

        def terms(i: int) -> tuple[str, ...]:
            found = self._line_terms.get(i)
            if found is None:
                found = self._line_terms[i] = tuple(tokenizer.tokenize(self.lines[i]))
            return found

        return best_passage(self.lines, query_terms, terms, max_chars)


def _keys(fm: dict[str, object], path: str, body: str) -> str:
    return f"{note_title(path, body)}\n{aliases_text(fm.get('aliases'))}"


def key_text(text: str, path: str) -> str:
    """The title and aliases of a note's ``text``, one per line; the frontmatter is parsed
    only when its block mentions ``aliases``."""
    block, body, _ = split_frontmatter(text)
    if block is not None and "aliases" in block:
        fm, body, _ = parse_frontmatter(text)
        return _keys(fm, path, body)
    return _keys({}, path, body)


def parse_view(text: str, path: str = "") -> NoteView:
    """A fresh ``NoteView`` of ``text`` (a note file's exact content at ``path``)."""
    fm, body, _ = parse_frontmatter(text)
    return NoteView(text, str(fm.get("type") or ""), str(fm.get("updated") or ""),
                    str(fm.get("status") or ""), tuple(content_lines(body)), path)


class NoteViews:
    """A least-recently-used memo of ``parse_view`` keyed by text, bounded in views and
    in characters. Not thread-safe: one per ``EchoContext`` (each thread that runs server
    calls has its own)."""

    def __init__(self, max_views: int = MAX_VIEWS, max_chars: int = MAX_TOTAL_CHARS) -> None:
        self._views: OrderedDict[str, NoteView] = OrderedDict()
        self._keys: OrderedDict[str, frozenset[str]] = OrderedDict()
        self._max = max_views
        self._max_chars = max_chars
        self._chars = 0

    def __len__(self) -> int:
        return len(self._views)

    def key_terms(self, text: str, path: str, tokenizer: Tokenizer) -> frozenset[str]:
        """The terms of the title and aliases of ``text`` (``NoteView.key_terms``) without
        building a whole view when none is memoised: recall's key-field boost asks this of
        more notes than it returns. Memoised by text, the ``max_views`` most recent."""
        found = self._views.get(text)
        if found is not None:
            return found.key_terms(tokenizer)
        keys = self._keys.get(text)
        if keys is None:
            keys = frozenset(tokenizer.tokenize(key_text(text, path)))
            if len(text) <= MAX_VIEW_CHARS:
                self._keys[text] = keys
                if len(self._keys) > self._max:
                    self._keys.popitem(last=False)
        else:
            self._keys.move_to_end(text)
        return keys

    def view(self, text: str, path: str = "") -> NoteView:
        """The view of ``text`` (parsed now, or the memoised one for the same text); the
        file stem of ``path`` is the title of a note without a ``# `` heading (a memoised
        view of the same text under another path keeps the first path's stem)."""
        found = self._views.get(text)
        if found is not None:
            self._views.move_to_end(text)
            return found
        made = parse_view(text, path)
        if len(text) <= min(MAX_VIEW_CHARS, self._max_chars):
            self._views[text] = made
            self._chars += len(text)
            while len(self._views) > self._max or self._chars > self._max_chars:
                dropped, _ = self._views.popitem(last=False)
                self._chars -= len(dropped)
        return made
