"""``habitat flag <session> <turn> [note]``: an operator routes one turn to the pattern
registry.

* **session**: a session id, or a prefix of one (4+ characters) that names one session.
* **turn**: a record id of that session, or ``N`` — the session's N-th ``prompt`` record
  (1 = its first prompt), in record order. A turn *spans* its prompt and every record
  after it up to the session's next prompt; a record id before the first prompt spans
  the records up to it.
* The flag is a ``flag`` record appended to the loom (agent ``operator``, the flagged
  session, ``parent_id`` and ``refs``: the flagged record, ``text``: the note), then
  registered: when a pattern already holds a record of the turn as evidence (the one
  holding the flagged record itself first, else the one holding the most of the turn),
  the flag is evidence of that pattern; otherwise it opens a ``flagged`` pattern whose
  signature is the normalised note (flags with the same note cluster), or the flagged
  record's id when there is no note. Evidence added: the flagged record (role
  ``flagged``) and the flag record (role ``flag``); the pattern's ``flags`` and
  ``recurrence`` go up by one and a monitored pattern becomes actionable.
* Flagging a turn again with the same note appends nothing and adds nothing (nothing
  doubled). A ``flag`` record written by other means is routed the same way by the
  next ``habitat patterns --scan``.
"""

from __future__ import annotations

from collections.abc import Sequence

from echo_core import redact
from plugins.habitat.distil_model import Failure, signature_text
from plugins.habitat.loom import RecordReader
from plugins.habitat.patterns import PatternStore, RegisterResult, pattern_id
from plugins.habitat.record import Record

__all__ = ["FLAG_AGENT", "flag_failure", "resolve_turn", "route_flag", "session_records",
           "turn_span"]

FLAG_AGENT = "operator"


def session_records(loom: RecordReader, session: str) -> tuple[str, list[Record]]:
    """``(session id, its records in order)`` for a session id or a unique prefix of
    one (4+ characters): the day files are read newest first and reading stops at the
    first day without the session once it was found. ``LookupError`` when no session or
    several match."""
    days = loom.days()
    found: dict[str, list[list[Record]]] = {}
    for day in reversed(days):
        today: dict[str, list[Record]] = {}
        for record in loom.records([day]):
            sid = record.session_id
            if sid == session or (len(session) >= 4 and sid.startswith(session)):
                today.setdefault(sid, []).append(record)
        if not today and found:
            break
        for sid, records in today.items():
            found.setdefault(sid, []).insert(0, records)
    if session in found:
        return session, [r for part in found[session] for r in part]
    if len(found) != 1:
        names = ", ".join(sorted(found)[:5])
        short = "" if len(session) >= 4 else " (a prefix needs 4+ characters)"
        raise LookupError(f"no session {session!r} in the record{short}" if not found
                          else f"{session!r} names several sessions: {names}")
    sid, parts = next(iter(found.items()))
    return sid, [r for part in parts for r in part]


def resolve_turn(records: Sequence[Record], turn: str) -> Record:
    """The record ``turn`` names in a session's ``records`` (see the module docstring);
    ``LookupError`` saying what the session has when it names none."""
    prompts = [r for r in records if r.kind == "prompt"]
    text = turn.strip()
    if text.isdigit():
        n = int(text)
        if 1 <= n <= len(prompts):
            return prompts[n - 1]
        if not prompts:
            raise LookupError(f"turn {n}: the session has no prompt to flag by number; "
                              "give a record id of the session")
        raise LookupError(f"turn {n}: the session has {len(prompts)} prompt(s); give 1.."
                          f"{len(prompts)} or a record id")
    for record in records:
        if record.id == text:
            return record
    raise LookupError(f"no record {text!r} in this session")


def turn_span(records: Sequence[Record], target: Record) -> list[Record]:
    """The records of ``target``'s turn (see the module docstring)."""
    at = next(i for i, r in enumerate(records) if r.id == target.id)
    start = max((i for i in range(at + 1) if records[i].kind == "prompt"), default=0)
    end = next((i for i in range(at + 1, len(records)) if records[i].kind == "prompt"),
               len(records))
    return list(records[start:end])


def flag_failure(flag: Record, target: Record, holder: str | None) -> Failure:
    """The ``flagged`` occurrence of ``flag`` on ``target``: the signature of the
    pattern ``holder`` when a pattern holds the turn, else one of its own."""
    note = redact(flag.text).text.strip()  # a flag written by other means too
    signature = holder or f"flagged|{signature_text(note) if note else target.id}"
    said = note.splitlines()[0][:120] if note else target.text.strip()[:120]
    return Failure(kind="flagged", key=f"flagged|{flag.id}", signature=signature,
                   severity="high", session_id=target.session_id, agent_id=target.agent_id,
                   record_ids=(target.id, flag.id), first_ts=target.ts, last_ts=target.ts,
                   summary=f"flagged by the operator: {said}")


def route_flag(store: PatternStore, flag: Record, target: Record, span: Sequence[Record], *,
               now: str, batch_size: int) -> tuple[RegisterResult, str]:
    """Register ``flag`` (on ``target``, whose turn is ``span``); returns what changed
    and the id of the pattern it went to."""
    holder = store.pattern_holding(target.id, [r.id for r in span if r.id != flag.id])
    failure = flag_failure(flag, target, holder)
    roles = {failure.key: {target.id: "flagged", flag.id: "flag"}}
    result = store.register([failure], now=now, batch_size=batch_size, roles=roles)
    return result, pattern_id(failure.signature)

