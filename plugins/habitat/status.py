"""``habitat status``: the habitat at a glance, read only.

* **agents** — the agents with records in the last ``hours`` hours before ``ctx.now()``
  (the loom's day files of that window): per agent its sessions, records, failed tool
  calls and latest record time, the latest first;
* **pending approvals** — how many learnings wait for the operator
  (``LearningStore.list("pending")``);
* **patterns** — the registry's count per status and the actionable ones (worst first);
* **last digest** — the day, note and time of the latest digest written
  (``digest_note.last_digest``).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

import attrs

from echo_core import Action, Envelope

__all__ = ["ACTIVE_HOURS", "AgentActivity", "LastDigest", "PatternBrief", "StatusResult",
           "habitat_status"]

ACTIVE_HOURS = 24
#: Actionable patterns listed.
SHOWN = 10
_SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}


@attrs.frozen(kw_only=True)
class AgentActivity:
    """One agent's records in the window."""

    agent_id: str
    sessions: int
    records: int
    tool_errors: int
    last_ts: str


@attrs.frozen(kw_only=True)
class PatternBrief:
    """An actionable pattern in one line."""

    id: str
    title: str
    severity: str
    recurrence: int
    flags: int


@attrs.frozen(kw_only=True)
class LastDigest:
    """The latest digest written."""

    date: str
    path: str
    written: str


@attrs.frozen(kw_only=True)
class StatusResult:
    """The habitat at a glance (see the module docstring); ``since``: the window's start;
    ``problems``: what could not be read."""

    since: str
    agents: tuple[AgentActivity, ...]
    pending_approvals: int
    patterns: dict[str, int]
    actionable: tuple[PatternBrief, ...]
    last_digest: LastDigest | None
    problems: tuple[str, ...] = ()


def _activity(ctx: Any, since: _dt.datetime) -> list[AgentActivity]:
    from plugins.habitat.distil_model import record_time
    from plugins.habitat.record_source import record_source

    loom = record_source(ctx)
    first = since.date().isoformat()
    cutoff = (since - _dt.datetime(1970, 1, 1)).total_seconds()
    per: dict[str, dict[str, Any]] = {}
    for record in loom.records([d for d in loom.days() if d >= first]):
        if record_time(record) < cutoff:
            continue
        row = per.setdefault(record.agent_id, {"sessions": set(), "records": 0, "errors": 0,
                                                "last": ""})
        row["sessions"].add(record.session_id)
        row["records"] += 1
        row["errors"] += int(record.kind == "tool" and record.is_error)
        row["last"] = max(row["last"], record.ts)
    rows = [AgentActivity(agent_id=a, sessions=len(r["sessions"]), records=r["records"],
                          tool_errors=r["errors"], last_ts=r["last"]) for a, r in per.items()]
    return sorted(rows, key=lambda r: (r.last_ts, r.agent_id), reverse=True)


def habitat_status(ctx: Any, *, hours: int = ACTIVE_HOURS) -> Envelope[StatusResult]:
    """The status (see the module docstring)."""
    from plugins.habitat.digest import pending_learnings
    from plugins.habitat.digest_note import last_digest
    from plugins.habitat.paths import habitat_dir
    from plugins.habitat.patterns import pattern_store
    from plugins.habitat.patterns_lifecycle import STATUSES

    problems: list[str] = []
    since = ctx.now() - _dt.timedelta(hours=hours)
    agents = _activity(ctx, since)
    pending = len(pending_learnings(ctx, problems))
    every = pattern_store(ctx).list()
    counts = {s: sum(1 for p in every if p.status == s) for s in STATUSES}
    actionable = sorted((p for p in every if p.status == "actionable"),
                        key=lambda p: (_SEVERITY_RANK.get(p.severity, 3), -p.recurrence, p.id))
    briefs = tuple(PatternBrief(id=p.id, title=p.title, severity=p.severity,
                                recurrence=p.recurrence, flags=p.flags)
                   for p in actionable[:SHOWN])
    mark = last_digest(habitat_dir(ctx))
    data = StatusResult(since=since.isoformat(timespec="seconds"), agents=tuple(agents),
                        pending_approvals=pending, patterns=counts, actionable=briefs,
                        last_digest=None if mark is None else LastDigest(**mark),
                        problems=tuple(problems))
    message = (f"{len(agents)} agent(s) active in the last {hours} h, {pending} learning(s) "
               f"to approve, {counts['actionable']} actionable pattern(s)")
    return Envelope(True, Action.READ, message, data)


def render_status(env: Envelope[Any]) -> str:
    """Agents, approvals, patterns, last digest."""
    d: StatusResult = env.data
    lines = [env.message, f"agents since {d.since}:"]
    lines += [f"  {a.agent_id}: {a.sessions} session(s), {a.records} record(s), "
              f"{a.tool_errors} failed call(s), last {a.last_ts[:19]}" for a in d.agents]
    if not d.agents:
        lines.append("  none")
    lines.append(f"pending approvals: {d.pending_approvals}")
    lines.append("patterns: " + (", ".join(f"{s} {n}" for s, n in d.patterns.items() if n)
                                 or "none"))
    lines += [f"  {p.id} {p.severity} x{p.recurrence}: {p.title}" for p in d.actionable]
    lines.append("last digest: " + (f"{d.last_digest.date} ({d.last_digest.path}, written "
                                    f"{d.last_digest.written})" if d.last_digest else "none"))
    lines += [f"not read: {p}" for p in d.problems]
    return "\n".join(lines)
