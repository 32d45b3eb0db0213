"""``eval`` (the MCP ``echo_eval``), declared once: recall quality measured on the user's
own vault, and its trend across runs (``echo_core.ops.self_eval``). No skill."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import CliParam, CliSurface, Operation, lazy_type, param


@attrs.frozen(kw_only=True)
class EvalParams:
    """What ``eval`` / ``echo_eval`` take."""

    queries: int = param(200, help="Most queries to ask (drawn from the notes in a fixed "
                         "order, so the same vault gets the same queries).", ge=1, le=5000,
                         cli=CliParam(short="-q", metavar="N"))
    save: bool = param(True, help="Append this run to the eval history in the state dir "
                       "(the trend); false leaves the history as it is.",
                       cli=CliParam(flag="--no-save", negate=True,
                                    help="Do not add this run to the history."))


def _figure(value: float, change: float | None) -> str:
    return f"{value:.2f}" + ("" if change is None else f" ({change:+.2f})")


def _previous_kind(data: Any, kind: str) -> Any:
    previous = data.previous
    if previous is None:
        return None
    return next((k for k in previous.kinds if k.kind == kind), None)


def render_eval(env: Envelope[Any]) -> str:
    """The figures per kind of query (with the change since the previous run), the trend
    line, and the worst misses: query, the note expected, what came first."""
    data = env.data
    if not data.queries:
        return env.message
    header = (f"recall on your own notes: {data.queries} queries from {data.notes} of "
              f"{data.corpus} notes, ranker {data.ranker}, {data.seconds:.1f} s")
    lines = [header, f"  {'kind':<10}{'queries':>8}  {'R@5':<13}{'R@10':<13}MRR"]
    rows = [*data.kinds, None]
    for kind in rows:
        if kind is None:
            name, n, figs = "all", data.queries, (data.r5, data.r10, data.mrr)
            before = data.previous
        else:
            name, n, figs = kind.kind, kind.queries, (kind.r5, kind.r10, kind.mrr)
            before = _previous_kind(data, kind.kind)
        olds = (None, None, None) if before is None else (before.r5, before.r10, before.mrr)
        cells = [_figure(v, None if o is None else round(v - o, 4)) for v, o in zip(figs, olds)]
        lines.append(f"  {name:<10}{n:>8}  " + "".join(f"{c:<13}" for c in cells).rstrip())
    if data.previous is not None:
        trend = (f"trend: {env.message.split(' on ', 1)[0]}; "
                 f"{data.runs_before} earlier run{'s' if data.runs_before != 1 else ''}")
        if data.changed:
            trend += f"; since then: {', '.join(data.changed)}"
        lines.append(trend)
    else:
        lines.append("trend: first run (run eval again after a change to see the difference)")
    if data.misses:
        lines.append("worst misses:")
        for miss in data.misses:
            rank = "not in top 10" if miss.rank is None else f"rank {miss.rank}"
            lines.append(f"  [{miss.kind}] {miss.query!r} -> {miss.expected} ({rank}); "
                         f"first: {miss.first or 'nothing'}")
    lines.append(f"history: {data.history}" + ("" if data.saved else " (this run not saved)"))
    return "\n".join(lines)


def run_eval(ctx: Any, p: EvalParams) -> Envelope[Any]:
    """``echo_core.ops.self_eval.self_eval``."""
    from echo_core.ops.self_eval import self_eval

    return self_eval(ctx, queries=p.queries, save=p.save)


EVAL = Operation(
    "eval", "Measure recall on your own notes: R@5 and MRR, and the change since last run.",
    ("Measure how well recall finds this vault's notes: queries made from note titles, "
     "aliases, headings and distinctive sentences, each answered by its own note. Use it "
     "after changing the vault or the recall config to see whether recall got better or "
     "worse. Returns R@5, R@10 and MRR (overall and per kind), the worst misses, and the "
     "previous run's figures with the change."),
    EvalParams, run_eval, lazy_type("echo_core.ops.self_eval", "EvalResult"),
    access="read", render=render_eval, fresh="quick",
    cli=CliSurface(help="""Measure recall on your own notes: R@5 and MRR, and the change since last run.

Queries are made from your notes, with no model: each title, alias, a `##` heading
and the rarest words of one sentence of a note, the note itself being the answer.
The same vault gives the same queries every run (notes are taken in a fixed order,
_agent/ and near-empty notes left out). Each query is searched as `recall` would
(without counting toward heat) and scored:

\b
  R@5 / R@10  share of queries whose note is in the first 5 / 10 hits
  MRR         mean of 1/rank of the note (0 beyond 10)

Each run is added to <state dir>/eval/history.jsonl (unless --no-save) and
compared with the previous one, so you see whether a change to the vault or the
config made recall better or worse. Nothing in the vault is written.

\b
Examples:
  echo-memory eval
  echo-memory eval --queries 50 --no-save
  echo-memory eval --json"""),
)
