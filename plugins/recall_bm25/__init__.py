"""recall_bm25: the ``bm25`` ranker (SPEC §3.1), a persistent BM25 x prior index.

Registers the ranker factory ``bm25`` (config ``recall = "bm25"``):
``factory(tokenizer, state_dir) -> Bm25Index``. The plugin ranks only: the core keeps the
active ranker current on note writes and deletions (``echo_core.ranker_upkeep``) and
rebuilds it when ``needs_rebuild()`` says so. Imported at CLI start-up, so numpy and the
index modules are imported only when a ranker is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from echo_core import Register, hookimpl

if TYPE_CHECKING:
    from echo_core import RankerFactory, Tokenizer
    from plugins.recall_bm25.index import Bm25Index

NAME = "bm25"


def bm25_factory(tokenizer: Tokenizer, state_dir: str) -> Bm25Index:
    """``RankerFactory`` for ``bm25``: the index under ``<state_dir>/bm25`` (no I/O yet)."""
    from plugins.recall_bm25.index import Bm25Index

    return Bm25Index(tokenizer, state_dir)


@hookimpl
def register_rankers(register: Register[RankerFactory]) -> None:
    """Register the ``bm25`` ranker factory."""
    register(NAME, bm25_factory)
