"""Cutting a rebuild's documents in two, so a forked child can tokenize one half."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from echo_core import IndexDoc, SplittableDocs

__all__ = ["APART_MIN_DOCS", "halves"]

#: ``rebuild`` of at least this many docs (a list or a ``SplittableDocs``) tokenizes its
#: second half on another core (a forked child: ``echo_core.start_forked``; here when it cannot).
APART_MIN_DOCS = 4096


def halves(docs: Iterable[IndexDoc], min_docs: int = APART_MIN_DOCS
           ) -> tuple[Iterable[IndexDoc], Sequence[IndexDoc] | SplittableDocs | None]:
    """``docs`` cut in two when there are ``min_docs`` or more and they can be cut (a
    list, a ``SplittableDocs``); else ``(docs, None)``."""
    if isinstance(docs, (Sequence, SplittableDocs)) and len(docs) >= min_docs:
        half = len(docs) // 2
        if isinstance(docs, SplittableDocs):
            return docs.split(half)
        return docs[:half], docs[half:]
    return docs, None
