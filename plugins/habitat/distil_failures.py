"""Failure extraction from the record: each session's records read in order.

``distil(records, now=...)`` groups the records by session (record order kept) and finds:

* **error streaks** — ``STREAK_MIN`` or more consecutive failed tool calls of a session
  (consecutive among its ``tool`` records: a prompt or reply in between does not end a
  streak, a successful call does). A streak whose every call is part of one stuck loop
  is reported as that loop only.
* **stuck loops** — ``STUCK_MIN`` or more consecutive tool calls within one turn (a
  prompt, reply or session record ends the run) that are *near-identical* and make *no
  progress*. Near-identical: the same tool, and the same arguments (a JSON input's
  values) up to case, whitespace, hex ids and standalone numbers
  (``distil_model.fold_key``: ``sleep 5`` and ``sleep 10`` are alike, ``test_1.py`` and
  ``test_2.py`` are not). No progress: each call has the first call's outcome — the
  same ``is_error`` and the same result up to the same folding. Paging through a file
  is progress (the results differ); polling a build that keeps answering "still
  running (12 s)" is not.
* **abandoned tasks** — a session that is over (a ``session`` record ``end ...`` after
  its last prompt, or nothing recorded for ``ABANDON_IDLE_S`` before ``now``) whose last
  prompt got no ``reply``. Only judged for an agent that records replies (some reply of
  that agent is among the records read) or when the session stopped on a failed call
  ("ended mid-error-streak"), so an agent that never records replies is not reported
  as abandoning everything.
* **frustration** — a prompt showing an operator's frustration
  (``distil_frustration``); its evidence is the prompt and the agent's record it
  answers.

Operator flags (``flag`` records) are routed by ``patterns_flag``, not here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from plugins.habitat.distil_frustration import frustration_signal
from plugins.habitat.distil_model import (
    Failure,
    args_text,
    fold_key,
    record_time,
    signature_text,
    tool_call,
)
from plugins.habitat.record import Record

__all__ = ["ABANDON_IDLE_S", "STREAK_MIN", "STUCK_MIN", "by_session", "distil"]

STREAK_MIN = 3
STUCK_MIN = 3
#: A streak or loop this long is ``high`` severity.
SEVERE_LENGTH = 6
ABANDON_IDLE_S = 3600.0
_TURN_ENDS = frozenset({"prompt", "reply", "session"})


def by_session(records: Iterable[Record]) -> dict[str, list[Record]]:
    """Records per session id, each list in record order."""
    sessions: dict[str, list[Record]] = {}
    for record in records:
        sessions.setdefault(record.session_id, []).append(record)
    return sessions


def distil(records: Iterable[Record], *, now: float) -> list[Failure]:
    """Every failure of ``records`` (see the module docstring), ordered by the time of
    its first record; ``now``: seconds, as ``record_time`` gives them."""
    sessions = by_session(records)
    replying = {r.agent_id for rs in sessions.values() for r in rs if r.kind == "reply"}
    found: list[Failure] = []
    for session in sessions.values():
        loops = stuck_loops(session)
        looped = {rid for loop in loops for rid in loop.record_ids}
        found += error_streaks(session, looped)
        found += loops
        found += abandoned(session, now=now, records_replies=session[0].agent_id in replying)
        found += frustration(session)
    return sorted(found, key=lambda f: (f.first_ts, f.key))


def _failure(kind: str, signature: str, severity: str, records: Sequence[Record],
             summary: str, tool: str = "") -> Failure:
    first = records[0]
    return Failure(kind=kind, key=f"{kind}|{first.id}", signature=signature,
                   severity=severity, session_id=first.session_id, agent_id=first.agent_id,
                   record_ids=tuple(r.id for r in records), first_ts=first.ts,
                   last_ts=max(r.ts for r in records), summary=summary[:300], tool=tool)


def _line(text: str, limit: int = 80) -> str:
    """The first line of ``text``, secrets redacted (before the cut: a key cut in half
    is not recognised), cut to ``limit``: a summary the registry keeps."""
    from echo_core import redact

    first = next((ln.strip() for ln in redact(text).text.splitlines() if ln.strip()), "")
    return first if len(first) <= limit else first[:limit - 1] + "…"


def error_streaks(session: Sequence[Record], looped: set[str]) -> list[Failure]:
    """The session's runs of ``STREAK_MIN``+ failed tool calls not wholly in a loop."""
    found: list[Failure] = []
    run: list[Record] = []
    tools: list[Record | None] = [r for r in session if r.kind == "tool"]
    for record in [*tools, None]:
        if record is not None and record.is_error:
            run.append(record)
            continue
        if len(run) >= STREAK_MIN and not all(r.id in looped for r in run):
            first = run[0]
            tool = tool_call(first).name
            names = ", ".join(dict.fromkeys(tool_call(r).name for r in run))
            error = first.result or first.text
            found.append(_failure(
                "error_streak", f"error_streak|{tool}|{signature_text(error)}",
                "high" if len(run) >= SEVERE_LENGTH else "medium", run,
                f"{len(run)} failed tool calls in a row ({names}): {_line(error)}", tool))
        run = []
    return found


def near_identical(a: Record, b: Record) -> bool:
    """Same tool and the same ``fold_key`` of the arguments (module docstring)."""
    call_a, call_b = tool_call(a), tool_call(b)
    return (call_a.name == call_b.name
            and fold_key(args_text(call_a.args)) == fold_key(args_text(call_b.args)))


def _same_outcome(a: Record, b: Record) -> bool:
    return a.is_error == b.is_error and fold_key(a.result) == fold_key(b.result)


def stuck_loops(session: Sequence[Record]) -> list[Failure]:
    """The session's runs of ``STUCK_MIN``+ near-identical calls without progress."""
    found: list[Failure] = []
    run: list[Record] = []

    def close() -> None:
        if len(run) >= STUCK_MIN:
            first = run[0]
            call = tool_call(first)
            outcome = "failing" if first.is_error else "same result"
            found.append(_failure(
                "stuck_loop",
                f"stuck_loop|{call.name}|"
                f"{signature_text(args_text(call.args), 80, quoted=False)}",
                "high" if len(run) >= SEVERE_LENGTH else "medium", run,
                f"{len(run)} near-identical {call.name} calls, {outcome} each time: "
                f"{_line(args_text(call.args))}", call.name))

    for record in session:
        if record.kind in _TURN_ENDS:
            close()
            run = []
        elif record.kind == "tool":
            if run and near_identical(run[0], record) and _same_outcome(run[0], record):
                run.append(record)
            else:
                close()
                run = [record]
    close()
    return found


def abandoned(session: Sequence[Record], *, now: float, records_replies: bool) -> list[Failure]:
    """The session's last task, if it was abandoned (see the module docstring)."""
    last = max((i for i, r in enumerate(session) if r.kind == "prompt"), default=None)
    if last is None:
        return []
    after = session[last + 1:]
    if any(r.kind == "reply" for r in after):
        return []
    ends = [r for r in after if r.kind == "session" and r.text.lower().startswith("end")]
    if not ends and now - record_time(session[-1]) < ABANDON_IDLE_S:
        return []
    tools = [r for r in after if r.kind == "tool"]
    on_error = bool(tools) and tools[-1].is_error
    if not (records_replies or on_error):
        return []
    prompt = session[last]
    if on_error:
        tool = tool_call(tools[-1]).name
        signature = f"abandoned|after errors|{tool}|{signature_text(tools[-1].result, 80)}"
        why = f"after a failed {tool} call: {_line(tools[-1].result)}"
    else:
        tool, signature = "", "abandoned|no reply"
        why = "no reply" + (f" after {len(tools)} tool call(s)" if tools else "")
    evidence = [prompt, *tools[-5:], *ends[:1]]
    return [_failure("abandoned", signature, "medium", evidence,
                     f"task abandoned ({why}): {_line(prompt.text)}", tool)]


def frustration(session: Sequence[Record]) -> list[Failure]:
    """The session's prompts showing frustration, each with the record it answers."""
    found: list[Failure] = []
    previous_prompt: str | None = None
    answered: Record | None = None
    for record in session:
        if record.kind == "prompt":
            signal = frustration_signal(record.text, previous_prompt)
            if signal is not None:
                evidence = [record] if answered is None else [record, answered]
                found.append(_failure("frustration", f"frustration|{signal}", "low", evidence,
                                      f"operator frustration ({signal}): "
                                      f"{_line(record.text)}"))
            previous_prompt, answered = record.text, None
        elif record.kind in ("reply", "tool"):
            answered = record
    return found
