"""``eval``: how well recall finds the user's own notes, measured on the vault itself (no
LLM), and whether that got better or worse since the last run.

Queries come from the notes (titles, aliases, headings, distinctive words of a sentence;
``echo_core.ops.self_eval_queries``), each answered by the note it came from. Each is
searched with ``recall(ctx, query, limit=10, include_linked=False)`` called directly (not
the ``recall`` verb, so no hit is counted toward heat). Figures, overall and per kind:

* R@5 / R@10: the share of queries whose note is among the first 5 / 10 primary hits;
* MRR@10: the mean of 1 / the note's rank (0 when it is not in the first 10).

A run is saved as one line of ``<state dir>/eval/history.jsonl`` unless ``save`` is false
(``echo_core.ops.self_eval_history``); the result carries the previous saved run and the
changes since. Progress (one unit per query) goes through ``echo_core.progress``. The
vault is only read: no note, no index file in it is written (the recall index in the
state dir is rebuilt first if it must be, as any recall would). A note that cannot be
read (not UTF-8) is asked nothing about, with a warning naming it, as ``lint`` does.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.models import Envelope
from echo_core.ops.index_sync import read_current
from echo_core.ops.recall import recall
from echo_core.ops.recall_index import ensure_index
from echo_core.ops.self_eval_history import (
    EvalRecord,
    KindFigures,
    append_record,
    history_path,
    read_records,
)
from echo_core.ops.self_eval_queries import KINDS, EvalQuery, generate_queries
from echo_core.progress import report as report_progress
from echo_core.progress import reporting

if TYPE_CHECKING:
    from echo_core.context import EchoContext

DEFAULT_QUERIES = 200
DEPTH = 10
TOP = 5
WORST_MISSES = 5
PROGRESS_EVERY = 10


@attrs.frozen
class EvalMiss:
    """A query whose note was not ranked first: its note (``expected``), the rank it got
    (None: not in the first 10) and what came first (None: nothing matched)."""

    query: str
    kind: str
    expected: str
    rank: int | None
    first: str | None


@attrs.frozen
class EvalChange:
    """This run minus the previous one, per figure."""

    r5: float
    r10: float
    mrr: float


@attrs.frozen
class EvalResult:
    """One run: the overall figures, per kind, the worst misses, the fingerprint, and the
    previous saved run with the changes since (None when there was none) and what differs
    in the fingerprint (``changed``, e.g. ``notes 980 -> 1000``)."""

    r5: float
    r10: float
    mrr: float
    queries: int
    notes: int
    corpus: int
    ranker: str
    tokenizer: str
    seconds: float
    at: str
    kinds: tuple[KindFigures, ...]
    misses: tuple[EvalMiss, ...]
    saved: bool
    history: str
    runs_before: int = 0
    previous: EvalRecord | None = None
    change: EvalChange | None = None
    changed: tuple[str, ...] = ()


def figures(kind: str, ranks: Sequence[int | None]) -> KindFigures:
    """R@5, R@10 and MRR@10 of ``ranks`` (1-based, None: not in the first 10), rounded to
    4 places; all 0 for no query."""
    n = len(ranks)
    if not n:
        return KindFigures(kind, 0, 0.0, 0.0, 0.0)
    hit5 = sum(1 for r in ranks if r is not None and r <= TOP)
    hit10 = sum(1 for r in ranks if r is not None and r <= DEPTH)
    mrr = sum(1.0 / r for r in ranks if r is not None and r <= DEPTH)
    return KindFigures(kind, n, round(hit5 / n, 4), round(hit10 / n, 4), round(mrr / n, 4))


def rank_of(ctx: EchoContext, query: EvalQuery) -> tuple[int | None, str | None]:
    """The rank of ``query``'s note among recall's first 10 primary hits (None: absent)
    and the path ranked first (None: no hit)."""
    hits = [h.path for h in recall(ctx, query.text, limit=DEPTH, include_linked=False).data.primary]
    rank = hits.index(query.answer) + 1 if query.answer in hits else None
    return rank, hits[0] if hits else None


def _worst(queries: Sequence[EvalQuery], ranks: Sequence[tuple[int | None, str | None]]
           ) -> tuple[EvalMiss, ...]:
    """The ``WORST_MISSES`` worst misses: not found first, then the lowest ranks (ties in
    query order)."""
    misses = [(DEPTH + 1 if rank is None else rank, i) for i, (rank, _) in enumerate(ranks)
              if rank != 1]
    misses.sort(key=lambda m: (-m[0], m[1]))
    return tuple(EvalMiss(queries[i].text, queries[i].kind, queries[i].answer, ranks[i][0],
                          ranks[i][1]) for _, i in misses[:WORST_MISSES])


def _changed(before: EvalRecord, now: EvalRecord) -> tuple[str, ...]:
    """What differs in the fingerprint, as ``name old -> new``."""
    pairs = (("ranker", before.ranker, now.ranker), ("tokenizer", before.tokenizer, now.tokenizer),
             ("notes", before.corpus, now.corpus), ("queries", before.queries, now.queries))
    return tuple(f"{name} {old} -> {new}" for name, old, new in pairs if old != new)


def self_eval(ctx: EchoContext, *, queries: int = DEFAULT_QUERIES,
              save: bool = True) -> Envelope[EvalResult]:
    """Measure recall on at most ``queries`` queries drawn from the vault (module
    docstring); with ``save``, append the run to the history. The vault is only read.
    Errors: those of ``recall`` (an unreachable vault). A history that cannot be read or
    written is a warning, never an error; so is a note that cannot be read (left out)."""
    start = time.perf_counter()
    query_set = generate_queries(ctx.vault.storage, ctx.tokenizer, queries,
                                 read=lambda paths: read_current(ctx, paths))
    with reporting(lambda done, total: None):  # a rebuild's own progress is not this run's
        ensure_index(ctx)
    asked = query_set.queries
    if asked:
        report_progress(0, len(asked))
    ranks: list[tuple[int | None, str | None]] = []
    for done, query in enumerate(asked, 1):
        ranks.append(rank_of(ctx, query))
        if done % PROGRESS_EVERY == 0 or done == len(asked):
            report_progress(done, len(asked))
    overall = figures("all", [r for r, _ in ranks])
    kinds = tuple(figures(kind, [r for q, (r, _) in zip(asked, ranks, strict=True)
                                 if q.kind == kind])
                  for kind in KINDS if any(q.kind == kind for q in asked))
    record = EvalRecord(
        at=ctx.now().isoformat(timespec="seconds"), r5=overall.r5, r10=overall.r10,
        mrr=overall.mrr, ranker=ctx.ranker_upkeep.name, tokenizer=ctx.config.tokenizer,
        corpus=query_set.corpus, queries=len(asked), notes=query_set.notes,
        seconds=round(time.perf_counter() - start, 3), kinds=kinds)
    warnings = [f"{p} is not UTF-8 text; eval skipped it" for p in query_set.unreadable]
    try:
        before = read_records(ctx.state_dir)
    except OSError as exc:
        before = []
        warnings.append(f"could not read the eval history ({exc.strerror or exc}); no trend shown")
    saved = False
    if save and asked:
        try:
            append_record(ctx.state_dir, record)
            saved = True
        except OSError as exc:
            warnings.append(f"could not save this run to {history_path(ctx.state_dir)} "
                            f"({exc.strerror or exc})")
    previous = before[-1] if before else None
    result = EvalResult(
        r5=record.r5, r10=record.r10, mrr=record.mrr, queries=record.queries,
        notes=record.notes, corpus=record.corpus, ranker=record.ranker,
        tokenizer=record.tokenizer, seconds=record.seconds, at=record.at, kinds=kinds,
        misses=_worst(asked, ranks), saved=saved, history=str(history_path(ctx.state_dir)),
        runs_before=len(before), previous=previous,
        change=None if previous is None else EvalChange(
            round(record.r5 - previous.r5, 4), round(record.r10 - previous.r10, 4),
            round(record.mrr - previous.mrr, 4)),
        changed=() if previous is None else _changed(previous, record))
    return Envelope(True, Action.READ, summary(result), result, tuple(warnings))


def _signed(value: float) -> str:
    return f"{value:+.2f}"


def summary(result: EvalResult) -> str:
    """One line: ``R@5 0.82 (+0.03 since 2026-12-01), MRR 0.74 (-0.01) on 200 queries
    from 64 notes in 1.2 s``; no query: says why."""
    if not result.queries:
        return ("no queries: no note outside _agent/ has enough text to ask about "
                f"({result.corpus} notes in the recall corpus)")
    r5 = f"R@5 {result.r5:.2f}"
    mrr = f"MRR {result.mrr:.2f}"
    if result.change is not None and result.previous is not None:
        r5 += f" ({_signed(result.change.r5)} since {result.previous.day})"
        mrr += f" ({_signed(result.change.mrr)})"
    return (f"{r5}, {mrr} on {result.queries} queries from {result.notes} notes "
            f"in {result.seconds:.1f} s")
