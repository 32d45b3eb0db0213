"""Keeping the recall index present: automatic rebuild when absent or of another schema
(a persistent ranker) or not yet built in this process (a plain one), and the explicit
``reindex``.

A rebuild of a persistent ranker, whether ``reindex`` asked for it or the first recall of
a vault did, reports its progress through ``echo_core.progress`` when the surface shows
progress (the CLI draws it on a terminal's stderr), so a long first build is never a
silent wait.

A ranker marked for a rebuild (``ranker_marks``: a note change it failed to apply, or
notes written while ``bm25`` stood in for it) is rebuilt like one that says it needs it;
a rebuild clears the mark it started with. A ranker that fails while being (re)built
raises ``RankerFailed`` naming it (``ranker_faults``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.bulk_work import collector_paused
from echo_core.corpus import corpus_paths
from echo_core.corpus_docs import CorpusDocs
from echo_core.models import Envelope
from echo_core.progress import report as report_progress
from echo_core.progress import wanted as progress_wanted
from echo_core.protocols import IndexDoc
from echo_core.ranker_faults import guarded
from echo_core.ranker_marks import clear_mark, stale_token
from echo_core.storage_base import fork_safe_reads

if TYPE_CHECKING:
    from echo_core.context import EchoContext


@attrs.frozen
class ReindexResult:
    """What a rebuild did."""

    indexed: int
    seconds: float
    ranker: str
    skipped: tuple[str, ...] = ()


@collector_paused()
def rebuild_index(ctx: EchoContext, progress: Callable[[int], None] | None = None, *,
                  docs: Iterable[IndexDoc] | None = None) -> ReindexResult:
    """Rebuild the active ranker from the whole corpus (notes that fail to parse are
    skipped and listed), or from ``docs`` when the caller has already read it (the full
    sweep): a persistent ranker under the vault lock, a plain one by replacing the
    process's shared ranker with a freshly built one."""
    upkeep = ctx.ranker_upkeep
    start = time.perf_counter()
    folder = ranker_folder(ctx)
    token = stale_token(folder, upkeep.name)
    persistent = upkeep.persistent
    # a persistent ranker: under the vault lock, so no write slips past the rebuild (the
    # corpus is listed inside it too)
    lock = ctx.vault.storage.lock(timeout=60.0) if persistent is not None \
        else contextlib.nullcontext()
    corpus: CorpusDocs | None = None
    with lock:
        if docs is None:
            corpus = CorpusDocs(ctx.vault.storage)
            # handed whole only where a forked child may read it (else: one pass here)
            docs = corpus if fork_safe_reads(ctx.vault.storage) else iter(corpus)
        with guarded(upkeep.name, upkeep.ranker, "while being rebuilt from the notes"):
            if persistent is not None:
                count = persistent.rebuild(docs, progress)
            else:
                assert upkeep.shared is not None
                count = upkeep.shared.rebuild(docs, progress)
    clear_mark(folder, upkeep.name, token)
    skipped = tuple(corpus.skipped()) if corpus is not None else ()
    return ReindexResult(count, time.perf_counter() - start, ctx.ranker_upkeep.name, skipped)


def ensure_index(ctx: EchoContext) -> bool:
    """Make the active ranker ready to search; True when a build ran.

    A persistent ranker is rebuilt when it says it must (absent, other schema,
    unreadable); a plain ranker is built from the corpus once per process, then catches
    up with the notes other processes changed."""
    upkeep = ctx.ranker_upkeep
    folder = ranker_folder(ctx)
    token = stale_token(folder, upkeep.name)  # marked: missed note changes
    if upkeep.persistent is not None:
        with guarded(upkeep.name, upkeep.persistent, "in needs_rebuild"):
            needed = upkeep.persistent.needs_rebuild()
        if needed or token is not None:
            rebuild_reporting(ctx)
            return True
        return False
    built = upkeep.ensure_current()
    if built:  # built from the whole corpus: nothing missed
        clear_mark(folder, upkeep.name, token)
    return built


def ranker_folder(ctx: EchoContext) -> Path:
    """The folder the rankers of ``ctx``'s vault keep their files in (marks beside it)."""
    folder = ctx.ranker_upkeep.folder
    return Path(folder) if folder is not None else ctx.state_dir / "recall"


def rebuild_reporting(ctx: EchoContext) -> ReindexResult:
    """``rebuild_index`` reporting ``(done, total)`` through ``echo_core.progress`` when a
    surface shows progress (the corpus is then counted first: one listing)."""
    if not progress_wanted():
        return rebuild_index(ctx)
    total = corpus_size(ctx)
    report_progress(0, total)
    result = rebuild_index(ctx, lambda done: report_progress(min(done, total), total))
    report_progress(total, total)
    return result


def reindex(ctx: EchoContext, progress: Callable[[int], None] | None = None) -> Envelope[ReindexResult]:
    """Rebuild the recall index from the vault; ``progress(n)`` gets the count indexed so
    far, and without it the rebuild reports through ``echo_core.progress``."""
    result = rebuild_index(ctx, progress) if progress is not None else rebuild_reporting(ctx)
    rate = result.indexed / result.seconds if result.seconds else 0.0
    message = (f"indexed {result.indexed} notes in {result.seconds:.2f} s ({rate:,.0f} notes/s) "
               f"with ranker {result.ranker!r}")
    warnings = tuple(f"skipped unreadable note {p}" for p in result.skipped)
    return Envelope(True, Action.REINDEXED, message, result, warnings)


def corpus_size(ctx: EchoContext) -> int:
    """How many notes the corpus holds (for progress bars)."""
    return len(corpus_paths(ctx.vault.storage))
