"""recall_bm25: the ``bm25`` ranker (SPEC §3.1), a persistent BM25 x prior index.

Registers the ranker factory ``bm25`` (config ``recall = "bm25"``):
``factory(tokenizer, state_dir) -> Bm25Index``, and keeps that index current from the
note events (DESIGN §2: index plugins listen; the core never calls an index on the write
path). Imported at CLI start-up, so numpy and the index modules are imported only when a
ranker is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from echo_core.hookspecs import Register, hookimpl
from echo_core.protocols import Tokenizer

if TYPE_CHECKING:
    from echo_core.models import Note
    from plugins.recall_bm25.index import Bm25Index

NAME = "bm25"


def bm25_factory(tokenizer: Tokenizer, state_dir: str) -> Bm25Index:
    """``RankerFactory`` for ``bm25``: the index under ``<state_dir>/bm25`` (no I/O yet)."""
    from plugins.recall_bm25.index import Bm25Index

    return Bm25Index(tokenizer, state_dir)


@hookimpl
def register_rankers(register: Register) -> None:
    """Register the ``bm25`` ranker factory."""
    register(NAME, bm25_factory)


def _active_ranker(ctx: Any) -> Any:
    """The context's ranker when config ``recall`` picks this plugin's, else None."""
    config = getattr(ctx, "config", None)
    return ctx.ranker if getattr(config, "recall", None) == NAME else None


@hookimpl
def on_note_written(note: Note, ctx: Any) -> None:
    """Upsert the note (``echo_core.corpus.index_doc``), or drop it when it left the
    corpus. Work proportional to the note; a no-op when another ranker is configured."""
    ranker = _active_ranker(ctx)
    if ranker is None:
        return
    from echo_core.corpus import index_doc

    doc = index_doc(note)
    if doc is None:
        ranker.remove(note.path)
    else:
        ranker.upsert(doc)


@hookimpl
def on_note_deleted(path: str, ctx: Any) -> None:
    """Drop the note from the index (a no-op when unknown or another ranker is used)."""
    ranker = _active_ranker(ctx)
    if ranker is not None:
        ranker.remove(path)
