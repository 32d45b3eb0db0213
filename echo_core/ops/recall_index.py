"""Keeping the recall index present: automatic rebuild when absent or of another schema,
and the explicit ``reindex``."""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs

from echo_core.actions import Action
from echo_core.context import EchoContext
from echo_core.corpus import corpus_paths, iter_corpus
from echo_core.models import Envelope
from echo_core.protocols import PersistentRanker


@attrs.frozen
class ReindexResult:
    """What a rebuild did."""

    indexed: int
    seconds: float
    ranker: str
    skipped: tuple[str, ...] = ()


def rebuild_index(ctx: EchoContext, progress: Callable[[int], None] | None = None) -> ReindexResult:
    """Rebuild the active ranker from the whole corpus (notes that fail to parse are
    skipped and listed)."""
    ranker = ctx.ranker
    skipped: list[str] = []
    start = time.perf_counter()
    docs = iter_corpus(ctx.vault.storage, on_error=lambda path, exc: skipped.append(path))
    if isinstance(ranker, PersistentRanker):
        with ctx.vault.storage.lock(timeout=60.0):  # no write may slip past the rebuild
            count = ranker.rebuild(docs, progress)
    else:
        count = 0
        for path in list(_indexed_paths(ranker)):
            ranker.remove(path)
        for doc in docs:
            ranker.upsert(doc)
            count += 1
            if progress and count % 500 == 0:
                progress(count)
    return ReindexResult(count, time.perf_counter() - start, ctx.config.recall, tuple(skipped))


def _indexed_paths(ranker: object) -> list[str]:
    paths = getattr(ranker, "paths", None)
    return list(paths()) if callable(paths) else []


def ensure_index(ctx: EchoContext) -> bool:
    """Rebuild when the ranker says it must (absent, other schema, unreadable). True when
    a rebuild ran."""
    ranker = ctx.ranker
    if isinstance(ranker, PersistentRanker) and ranker.needs_rebuild():
        rebuild_index(ctx)
        return True
    return False


def reindex(ctx: EchoContext, progress: Callable[[int], None] | None = None) -> Envelope[ReindexResult]:
    """Rebuild the recall index from the vault."""
    result = rebuild_index(ctx, progress)
    rate = result.indexed / result.seconds if result.seconds else 0.0
    message = (f"indexed {result.indexed} notes in {result.seconds:.2f} s ({rate:,.0f} notes/s) "
               f"with ranker {result.ranker!r}")
    warnings = tuple(f"skipped unreadable note {p}" for p in result.skipped)
    return Envelope(True, Action.REINDEXED, message, result, warnings)


def corpus_size(ctx: EchoContext) -> int:
    """How many notes the corpus holds (for progress bars)."""
    return len(corpus_paths(ctx.vault.storage))
