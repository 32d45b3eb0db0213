"""Our tokenizer's terms as PostgreSQL ``tsvector`` / ``tsquery`` values.

PostgreSQL never parses or stems the text: both the indexed documents and the queries
go through the vault's configured tokenizer (``porterlite`` by default), and its terms
are written as ``tsvector`` / ``tsquery`` literals, one lexeme per term, exactly as
spelled. That is the ``simple`` configuration taken one step further: no parser can
split a term differently on the two sides, so a query term matches exactly the
documents whose text produced that term.

A document's vector: the title's terms at positions 1.. with weight label ``A``, then the
terms of ``IndexDoc.text`` (which holds the title again, the aliases, tags and body)
with label ``D``. PostgreSQL's limits are respected: positions above 16,383 are stored
as 16,383, at most 256 positions per lexeme are kept, lexemes longer than 2,046 bytes or
holding NUL are dropped, and the vector's lexemes stop at about 1 MB.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["MAX_POSITION", "MAX_POSITIONS", "quote", "tsquery_literal", "tsvector_literal"]

#: PostgreSQL's largest lexeme position, positions kept per lexeme, lexeme bytes.
MAX_POSITION = 16383
MAX_POSITIONS = 256
MAX_LEXEME_BYTES = 2046
#: Total lexeme bytes of one vector we stop at (PostgreSQL's limit is 1 MiB - 1).
MAX_VECTOR_BYTES = 1_000_000


def usable(term: str) -> bool:
    """Whether ``term`` can be a lexeme (non-empty, no NUL, short enough)."""
    return bool(term) and "\x00" not in term and len(term.encode("utf-8")) <= MAX_LEXEME_BYTES


def quote(term: str) -> str:
    """``term`` as a quoted lexeme of the ``tsvector`` / ``tsquery`` input syntax."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(title_terms: Sequence[str], text_terms: Sequence[str]) -> str:
    """The ``tsvector`` literal of a document (module docstring): title terms labelled
    ``A``, text terms unlabelled (``D``), positions in order."""
    positions: dict[str, list[str]] = {}
    size = 0
    position = 0
    for label, terms in (("A", title_terms), ("", text_terms)):
        for term in terms:
            position = min(position + 1, MAX_POSITION)
            if not usable(term):
                continue
            held = positions.get(term)
            if held is None:
                size += len(term.encode("utf-8"))
                if size > MAX_VECTOR_BYTES:
                    continue
                held = positions[term] = []
            if len(held) < MAX_POSITIONS:
                entry = f"{position}{label}"
                if not held or held[-1] != entry:
                    held.append(entry)
    return " ".join(f"{quote(term)}:{','.join(spots)}" for term, spots in positions.items())


def tsquery_literal(terms: Iterable[str]) -> str:
    """A ``tsquery`` literal matching documents holding any of ``terms`` ("" for none)."""
    return " | ".join(quote(term) for term in terms if usable(term))
