"""``habitat fold``: a summary view of a span of a session, never a deletion.

``fold_session(ctx, session, from_id, to_id)`` reads the session's records (through the
index, in record order), takes the span from ``from_id`` to ``to_id`` (both included;
default: the whole session, folds excluded), and appends one ``fold`` record:

* ``text``: one paragraph a person or a model reads — how many records of each kind,
  the errors, the tools used, the first prompt, the time span;
* ``result``: the same as JSON (``FoldSummary``);
* ``refs``: the id of every record folded, in order; ``parent_id``: the span's first.

The originals are not touched: the day files only grow. A span folded before (a fold
record with the same refs) is not folded again: the answer names that fold. A span of more than
``MAX_SPAN`` records is refused (fold it in parts with ``--from`` / ``--to``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs

from echo_core import CliParam, CliSurface, Envelope, McpSurface, Operation, param, usage_error
from plugins.habitat.operations_index import GROUP_HELP
from plugins.habitat.record import MAX_NAME, Record

__all__ = ["HABITAT_FOLD", "FoldResult", "FoldSummary", "fold_session", "summarise"]

MAX_SPAN = 5000
_EXCERPT = 200


@attrs.frozen(kw_only=True)
class FoldSummary:
    """What a span holds: counts per kind, the failed tool calls, the tools used (with
    how often), the first prompt, the first and last record's time."""

    records: int
    kinds: dict[str, int]
    errors: int
    error_ids: tuple[str, ...]
    tools: dict[str, int]
    first_prompt: str
    first_ts: str
    last_ts: str


def _tool_name(record: Record) -> str:
    name = record.text.split(" ", 1)[0].split("(", 1)[0]
    return name[:100] or "?"


def summarise(records: Sequence[Record]) -> FoldSummary:
    """The summary of ``records`` (non-empty, in order)."""
    kinds = Counter(r.kind for r in records)
    tools = Counter(_tool_name(r) for r in records if r.kind == "tool")
    errors = [r.id for r in records if r.is_error]
    prompt = next((r.text for r in records if r.kind == "prompt"), "")
    return FoldSummary(records=len(records), kinds=dict(sorted(kinds.items())),
                       errors=len(errors), error_ids=tuple(errors),
                       tools=dict(tools.most_common()), first_prompt=prompt[:_EXCERPT],
                       first_ts=records[0].ts, last_ts=records[-1].ts)


def _count_of(n: int, word: str) -> str:
    """``1 record``, ``2 records``, ``2 replies``."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") and word[-2:-1] not in "aeiou" \
        else f"{n} {word}s"


def summary_text(session: str, summary: FoldSummary) -> str:
    """The fold record's text (one paragraph)."""
    kinds = ", ".join(_count_of(n, k) for k, n in summary.kinds.items())
    parts = [(f"Fold of {_count_of(summary.records, 'record')} of session {session} "
              f"({summary.first_ts} to {summary.last_ts}): {kinds}.")]
    if summary.tools:
        parts.append("Tools: " + ", ".join(f"{t} x{n}" for t, n in summary.tools.items())
                     + ".")
    parts.append(f"Errors: {summary.errors}." if summary.errors else "No errors.")
    if summary.first_prompt:
        parts.append(f"First prompt: {summary.first_prompt!r}.")
    return " ".join(parts)


@attrs.frozen(kw_only=True)
class FoldParams:
    """What ``habitat fold`` takes."""

    session_id: str = param(help="The session to fold.", min_length=1, max_length=MAX_NAME,
                            cli=CliParam(positional=True, metavar="SESSION"))
    from_id: str = param("", help="The span's first record (default: the session's first).",
                         max_length=MAX_NAME, cli=CliParam(flag="--from", metavar="ID"))
    to_id: str = param("", help="The span's last record (default: the session's last).",
                       max_length=MAX_NAME, cli=CliParam(flag="--to", metavar="ID"))
    agent_id: str = param("", help="Who folds (default: $ECHO_AGENT_ID).",
                          max_length=MAX_NAME, cli=CliParam(flag="--agent", metavar="ID"))


@attrs.frozen(kw_only=True)
class FoldResult:
    """The fold record's id, the records it points at, and its summary."""

    id: str
    session_id: str
    refs: tuple[str, ...]
    summary: FoldSummary


def _span(records: list[Record], from_id: str, to_id: str) -> list[Record]:
    ids = [r.id for r in records]
    for given, what in ((from_id, "--from"), (to_id, "--to")):
        if given and given not in ids:
            raise usage_error(f"{what} {given!r} is not a record of this session")
    start = ids.index(from_id) if from_id else 0
    end = ids.index(to_id) + 1 if to_id else len(ids)
    if end <= start:
        raise usage_error("--to comes before --from in the session; swap them")
    span = records[start:end]
    return span if (from_id or to_id) else [r for r in span if r.kind != "fold"]


def fold_session(ctx: Any, session_id: str, from_id: str = "", to_id: str = "",
                 agent_id: str = "") -> Envelope[FoldResult]:
    """Append the fold record of the span (module docstring). Errors: ``not_found`` for
    a session with no record; ``usage_error`` for a bad span or one too long."""
    from echo_core import not_found
    from plugins.habitat.record_source import session_records
    from plugins.habitat.record_writes import agent_of, append_records, record_time

    records = session_records(ctx, session_id)
    if not records:
        raise not_found(f"no record of session {session_id!r} in the habitat's log")
    span = _span(records, from_id, to_id)
    if not span:
        raise usage_error(f"session {session_id!r} holds nothing to fold but folds")
    if len(span) > MAX_SPAN:
        raise usage_error(f"the span holds {len(span)} records (at most {MAX_SPAN}); fold "
                          "it in parts with --from and --to")
    summary = summarise(span)
    refs = tuple(r.id for r in span)
    done = next((r for r in records if r.kind == "fold" and tuple(r.refs) == refs), None)
    if done is not None:  # the same span folded before: one fold record is enough
        return Envelope(True, "unchanged", f"session {session_id}: "
                        f"{_count_of(len(span), 'record')} folded already, into {done.id}",
                        FoldResult(id=done.id, session_id=session_id, refs=refs,
                                   summary=summary))
    fold = Record.new(ts=record_time(ctx), kind="fold", agent_id=agent_of(ctx, agent_id),
                      session_id=session_id, text=summary_text(session_id, summary),
                      parent_id=span[0].id,
                      result=json.dumps(attrs.asdict(summary), ensure_ascii=False),
                      refs=refs)
    append_records(ctx, [fold])
    result = FoldResult(id=fold.id, session_id=session_id, refs=fold.refs, summary=summary)
    return Envelope(True, "folded", f"folded {_count_of(len(span), 'record')} of session "
                    f"{session_id} into {fold.id}", result)


def run_fold(ctx: Any, p: FoldParams) -> Envelope[FoldResult]:
    """``fold_session`` of the parameters."""
    return fold_session(ctx, p.session_id, p.from_id, p.to_id, p.agent_id)


def render_fold(env: Envelope[Any]) -> str:
    """The message and the summary's paragraph."""
    return f"{env.message}\n{summary_text(env.data.session_id, env.data.summary)}"


HABITAT_FOLD = Operation(
    "habitat-fold", "Summarise a span of a session into one fold record (nothing deleted).",
    ("Fold a session (or the span between two of its records) into one summary record: "
     "counts per kind, errors, tools used, the first prompt, with refs pointing at every "
     "original record, which stays as it was. Returns the fold's id and summary."),
    FoldParams, run_fold, FoldResult, access="write", render=render_fold, needs_vault=False,
    mcp=McpSurface(tool="echo_habitat_fold"),
    cli=CliSurface(command=("habitat", "fold"), group_help=GROUP_HELP),
)
