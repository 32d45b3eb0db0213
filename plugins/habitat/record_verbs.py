"""``habitat record`` (MCP ``echo_habitat_record``) and ``habitat fork``, declared once.

``record`` appends one record, or a batch (``records``), to the loom for an agent that
is not Claude Code (whose hooks record it): durable before the answer, sharing one
write and fsync with concurrent calls (``group_commit``). In a batch, a ``parent_id`` of
``#N`` points at the batch's record N (0-based, an earlier one). Over MCP the server
serialises the calls of one session (its records keep their call order) and runs
different sessions in parallel (``lock_param``: ``session_id``).

``fork`` starts a new branch from any record: an ``event`` record tagged ``fork`` whose
parent is that record (in its session, or in ``session_id`` when given); records
appended with that parent continue the branch.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from typing import Any

import attrs

from echo_core import (
    Bounds,
    CliArg,
    CliParam,
    CliSurface,
    Envelope,
    McpSurface,
    Operation,
    param,
    read_text_source,
    usage_error,
)
from plugins.habitat.operations_index import GROUP_HELP
from plugins.habitat.record import KINDS, MAX_NAME, Record

__all__ = ["HABITAT_FORK", "HABITAT_RECORD", "ForkResult", "RecordResult"]

#: Longest text or result a caller may send (the record keeps ``record.MAX_TEXT``).
MAX_INPUT = 1_000_000
#: Most records of one call.
MAX_BATCH = 1000
_KIND_CHOICES = tuple(sorted(KINDS))
_BATCH_PARENT = re.compile(r"^#(\d{1,4})$")
#: A control character (C0, tab and line breaks included, and DEL): no id holds one.
_ID_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _require_session_id(value: str, field: str = "session_id") -> None:
    """``usage_error`` naming ``field`` when the session id ``value`` holds a control
    character (a NUL, a line break, an ESC): an id is one line of plain text, shown in
    ``habitat ask`` answers and the day files. A ``/`` or ``..`` is plain text here: a
    session id is never part of a path (the day files are named by date, the hook
    recorder hashes any id that is not ``[A-Za-z0-9_-]``)."""
    found = _ID_CONTROL.search(value)
    if found is not None:
        raise usage_error(f"{field}: {value[:60]!r} holds the control character "
                          f"{found.group()!r}; give an id of plain text")


@attrs.frozen(kw_only=True)
class RecordItem:
    """One record of a batch (``records``)."""

    kind: str = param("note", help="What happened: " + ", ".join(_KIND_CHOICES) + ".",
                      choices=_KIND_CHOICES)
    text: str = param("", help="What it says (cut to 8000 characters).",
                      max_length=MAX_INPUT)
    parent_id: str = param("", help="The record it follows (#N: the batch's record N).",
                           max_length=MAX_NAME)
    result: str = param("", help="A tool call's result.", max_length=MAX_INPUT)
    is_error: bool = param(False, help="The tool call failed.")
    duration_ms: int | None = param(None, help="How long it took (ms).", ge=0,
                                    le=604_800_000)
    refs: tuple[str, ...] = param((), help="Records it is about.", max_length=100)
    tags: tuple[str, ...] = param((), help="Labels.", max_length=50)


@attrs.frozen(kw_only=True)
class RecordParams:
    """What ``habitat record`` / ``echo_habitat_record`` take."""

    session_id: str = param(help="The session the records belong to (any id the agent "
                            "keeps for one run of work).", min_length=1, max_length=MAX_NAME,
                            cli=CliParam(flag="--session", metavar="ID"))
    agent_id: str = param("", help="Who records (default: $ECHO_AGENT_ID, else "
                          "'unknown-agent').", max_length=MAX_NAME,
                          cli=CliParam(flag="--agent", metavar="ID"))
    text: str = param("", help="The record's text (cut to 8000 characters).",
                      max_length=MAX_INPUT, cli=CliParam(positional=True, metavar="TEXT"))
    kind: str = param("note", help="What happened: " + ", ".join(_KIND_CHOICES) + ".",
                      choices=_KIND_CHOICES)
    parent_id: str = param("", help="The record this one follows (its tree's parent).",
                           max_length=MAX_NAME, cli=CliParam(flag="--parent", metavar="ID"))
    result: str = param("", help="A tool call's result.", max_length=MAX_INPUT)
    is_error: bool = param(False, help="The tool call failed.")
    duration_ms: int | None = param(None, help="How long it took, in milliseconds.", ge=0,
                                    le=604_800_000)
    refs: tuple[str, ...] = param((), help="Records it is about (ids).", max_length=100,
                                  cli=CliParam(flag="--ref", split_commas=True))
    tags: tuple[str, ...] = param((), help="Labels.", max_length=50,
                                  cli=CliParam(flag="--tag", split_commas=True))
    records: tuple[Mapping[str, Any], ...] = param(
        (), help="A batch instead of one record: each with kind, text, parent_id (#N: the "
        "batch's record N), result, is_error, duration_ms, refs, tags.",
        max_length=MAX_BATCH, items=RecordItem,
        cli=CliParam(from_prepare=True, bounds=Bounds(max_length=100_000)))


@attrs.frozen(kw_only=True)
class RecordResult:
    """What was recorded: the new records' ids, in order."""

    ids: tuple[str, ...]
    session_id: str
    agent_id: str


_SINGLE = ("text", "parent_id", "result", "refs", "tags")


def _items(p: RecordParams) -> list[Mapping[str, Any]]:
    if not p.records:
        return [{"kind": p.kind, "text": p.text, "parent_id": p.parent_id,
                 "result": p.result, "is_error": p.is_error, "duration_ms": p.duration_ms,
                 "refs": p.refs, "tags": p.tags}]
    if any(getattr(p, name) for name in _SINGLE) or p.is_error or p.kind != "note" \
            or p.duration_ms is not None:
        raise usage_error("records: give a batch (records) or one record's fields "
                          "(text, kind, ...), not both")
    return list(p.records)


def build_records(ctx: Any, p: RecordParams) -> list[Record]:
    """The records ``p`` asks for (redacted; stamped now, a microsecond apart so their ids
    sort in batch order); ``usage_error`` naming the item for a bad one."""
    from plugins.habitat.record_writes import agent_of, record_time, redacted

    _require_session_id(p.session_id)
    agent = agent_of(ctx, p.agent_id)
    session = redacted(p.session_id)
    start = record_time(ctx)
    out: list[Record] = []
    for n, item in enumerate(_items(p)):
        where = f"records[{n}]" if p.records else "record"
        parent = redacted(str(item.get("parent_id") or "")) or None
        batch_ref = _BATCH_PARENT.match(parent or "")
        if batch_ref:
            index = int(batch_ref.group(1))
            if index >= n:
                raise usage_error(f"{where}.parent_id {parent}: #N names an earlier record "
                                  "of this batch")
            parent = out[index].id
        try:
            out.append(Record.new(
                ts=start + _dt.timedelta(microseconds=n), kind=str(item.get("kind") or "note"),
                agent_id=agent, session_id=session,
                text=redacted(str(item.get("text") or "")),
                parent_id=parent, result=redacted(str(item.get("result") or "")),
                is_error=bool(item.get("is_error")), duration_ms=item.get("duration_ms"),
                refs=tuple(redacted(str(r)) for r in item.get("refs") or ()),
                tags=tuple(redacted(str(t)) for t in item.get("tags") or ())))
        except ValueError as exc:
            raise usage_error(f"{where}: {exc}") from None
    return out


def _read_batch(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """The CLI's ``--file FILE|-``: a JSON array of records, or one JSON object a line."""
    import json

    out = dict(values)
    source = out.pop("file", None)
    if source is None:
        return out
    text = read_text_source(source, "--file")
    data: Any = []
    try:
        if text.lstrip().startswith("["):
            data = json.loads(text)
        else:  # one object a line: an error names the file's line, not the object's
            for number, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    try:
                        data.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise ValueError(f"{exc.msg}: line {number} column {exc.colno}"
                                         ) from None
    except ValueError as exc:
        raise usage_error(f"--file: not JSON ({exc}); give a JSON array of records or one "
                          "JSON object a line") from None
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise usage_error("--file: give a JSON array of record objects")
    if not data:  # as `habitat learn ""`: empty input is a usage error, nothing written
        raise usage_error("--file: the batch holds no records; give at least one record "
                          "object")
    out["records"] = tuple(data)
    return out


def run_record(ctx: Any, p: RecordParams) -> Envelope[RecordResult]:
    """Build and append the records (durable before returning)."""
    from plugins.habitat.record_writes import append_records

    records = build_records(ctx, p)
    queued = append_records(ctx, records)
    session = records[0].session_id  # as stored: redacted
    result = RecordResult(ids=tuple(r.id for r in records), session_id=session,
                          agent_id=records[0].agent_id)
    what = "1 record" if len(records) == 1 else f"{len(records)} records"
    if queued:
        return Envelope(True, "queued", f"queued {what} of session {session} on this "
                        "machine: the vault's database is unreachable; they join the shared "
                        "record with the next habitat call that reaches it", result)
    return Envelope(True, "recorded", f"recorded {what} in session {session}", result)


def render_record(env: Envelope[Any]) -> str:
    """The message, then each new id."""
    return "\n".join([env.message, *(f"  {rid}" for rid in env.data.ids)])


HABITAT_RECORD = Operation(
    "habitat-record", "Append a record (or a batch) to the habitat's shared log.",
    ("Record what you did so other agents and the operator can find it: a prompt, a "
     "reply, a tool call (result, is_error, duration_ms), a note, as one record or a "
     "batch (records), written durably before the answer. Returns the new ids, to use "
     "as parent_id of the records that follow."),
    RecordParams, run_record, RecordResult, access="write", lock_param="session_id",
    render=render_record, needs_vault=False,
    mcp=McpSurface(tool="echo_habitat_record"),
    cli=CliSurface(command=("habitat", "record"), prepare=_read_batch, group_help=GROUP_HELP,
                   extra=(CliArg("file", "A batch: a JSON array of records, or one JSON "
                                 "object a line (- for stdin).", metavar="FILE|-",
                                 required=False, flag="--file"),),
                   help="""Append a record (or a batch) to the habitat's shared log.

The record is in the day file, fsync-ed, before the command returns. Records of Claude
Code sessions come from the built plugin's hooks; this is for everything else.

\b
Examples:
  echo-memory habitat record --session s1 --agent ci "nightly build started"
  echo-memory habitat record --session s1 --kind tool --is-error \\
      --result "exit 1" "make test"
  echo-memory habitat record --session s1 --file batch.json"""),
)


# --- fork ------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ForkParams:
    """What ``habitat fork`` takes."""

    record_id: str = param(help="The record to branch from.", min_length=1,
                           max_length=MAX_NAME, cli=CliParam(positional=True, metavar="ID"))
    text: str = param("", help="Why the branch starts (one line).", max_length=2000,
                      cli=CliParam(flag="--note", metavar="TEXT"))
    session_id: str = param("", help="The session the branch goes on in (default: the "
                            "record's).", max_length=MAX_NAME,
                            cli=CliParam(flag="--session", metavar="ID"))
    agent_id: str = param("", help="Who forks (default: $ECHO_AGENT_ID).",
                          max_length=MAX_NAME, cli=CliParam(flag="--agent", metavar="ID"))


@attrs.frozen(kw_only=True)
class ForkResult:
    """The branch's first record."""

    id: str
    parent_id: str
    session_id: str
    agent_id: str


def find_record(ctx: Any, record_id: str) -> Record:
    """The record ``record_id`` (``record_source.find_record``); ``not_found`` when
    there is none."""
    from echo_core import not_found
    from plugins.habitat.record_source import find_record as lookup

    record = lookup(ctx, record_id)
    if record is None:
        raise not_found(f"no record {record_id!r} in the habitat's log; find ids with "
                        "`echo-memory habitat ask`")
    return record


def run_fork(ctx: Any, p: ForkParams) -> Envelope[ForkResult]:
    """Append the branch's first record under ``p.record_id``."""
    from plugins.habitat.record_writes import agent_of, append_records, record_time, redacted

    _require_session_id(p.session_id)
    base = find_record(ctx, p.record_id)
    record = Record.new(ts=record_time(ctx), kind="event", agent_id=agent_of(ctx, p.agent_id),
                        session_id=redacted(p.session_id) or base.session_id,
                        text=redacted(f"fork {p.text}".strip()), parent_id=base.id,
                        tags=("fork",))
    append_records(ctx, [record])
    result = ForkResult(id=record.id, parent_id=base.id, session_id=record.session_id,
                        agent_id=record.agent_id)
    return Envelope(True, "forked", f"forked {base.id}: new branch {record.id}", result)


HABITAT_FORK = Operation(
    "habitat-fork", "Start a new branch of the record from one of its records.",
    ("Branch the shared log at a record: a new record whose parent is that one, for "
     "trying another way from that point. Returns the branch's id: give it as parent_id "
     "of the records that continue the branch."),
    ForkParams, run_fork, ForkResult, access="write", needs_vault=False,
    mcp=McpSurface(tool="echo_habitat_fork"),
    cli=CliSurface(command=("habitat", "fork"), group_help=GROUP_HELP),
)
