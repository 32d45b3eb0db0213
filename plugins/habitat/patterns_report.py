"""What the detect verbs return (``PatternsResult``, ``PatternResult``,
``BatchesResult``, ``BatchResult``, ``FlagResult``) and how people read it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from plugins.habitat.patterns import Pattern
from plugins.habitat.patterns_scan import ScanSummary

__all__ = ["EVIDENCE_SHOWN", "BatchResult", "BatchRow", "BatchesResult", "EvidenceRecord",
           "FlagResult", "Occurrence", "PatternResult", "PatternsResult", "Transition",
           "render_batch", "render_batches", "render_flag", "render_pattern",
           "render_patterns"]

#: Evidence ids listed per pattern by ``habitat patterns`` (``habitat pattern`` lists all).
EVIDENCE_SHOWN = 20


@attrs.frozen(kw_only=True)
class PatternsResult:
    """The registry's patterns (of one status, when asked), counts per status, and what
    the scan did when there was one."""

    scan: ScanSummary | None
    counts: dict[str, int]
    patterns: tuple[Pattern, ...]


@attrs.frozen(kw_only=True)
class EvidenceRecord:
    """One evidence record as the loom holds it (texts cut to 300 characters);
    ``found`` False when its day file no longer has it."""

    id: str
    kind: str = ""
    session_id: str = ""
    agent_id: str = ""
    ts: str = ""
    text: str = ""
    result: str = ""
    is_error: bool = False
    found: bool = True


@attrs.frozen(kw_only=True)
class Occurrence:
    """One occurrence of a pattern (a batch item): its failure and its evidence."""

    key: str
    pattern_id: str
    kind: str
    session_id: str
    agent_id: str
    first_ts: str
    last_ts: str
    summary: str
    severity: str
    batch_id: str
    records: tuple[EvidenceRecord, ...]


@attrs.frozen(kw_only=True)
class Transition:
    """One status move of a pattern."""

    from_status: str
    to_status: str
    at: str
    by: str
    note: str


@attrs.frozen(kw_only=True)
class PatternResult:
    """One pattern with all its evidence, occurrences and status moves; ``moved``: this
    call changed its status."""

    pattern: Pattern
    occurrences: tuple[Occurrence, ...]
    transitions: tuple[Transition, ...]
    moved: bool = False


@attrs.frozen(kw_only=True)
class BatchRow:
    """A batch: id, when it was opened, its size, its items, the kinds among them."""

    id: str
    created: str
    size: int
    items: int
    kinds: dict[str, int]


@attrs.frozen(kw_only=True)
class BatchesResult:
    """Every batch, oldest first."""

    batches: tuple[BatchRow, ...]


@attrs.frozen(kw_only=True)
class BatchResult:
    """One batch and its items."""

    batch: BatchRow
    items: tuple[Occurrence, ...]


@attrs.frozen(kw_only=True)
class FlagResult:
    """A flag: the flagged record, the flag record (None when an identical flag existed),
    the pattern it went to and whether that pattern is new."""

    session_id: str
    turn: str
    target: EvidenceRecord
    flag_id: str | None
    pattern_id: str
    new_pattern: bool
    evidence: tuple[str, ...]


def _evidence_line(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:EVIDENCE_SHOWN])
    more = f" (+{len(ids) - EVIDENCE_SHOWN} more)" if len(ids) > EVIDENCE_SHOWN else ""
    return shown + more


def pattern_line(p: Pattern) -> str:
    """``<id>  <status>  <severity>  x<recurrence>  <title>``."""
    flags = f" flagged x{p.flags}" if p.flags else ""
    return f"{p.id}  {p.status:<12} {p.severity:<6} x{p.recurrence}{flags}  {p.title}"


def render_patterns(env: Any) -> str:
    """The scan's counts, then one line per pattern with its evidence."""
    data: PatternsResult = env.data
    lines = [env.message]
    if data.scan is not None:
        s = data.scan
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(s.found.items())) or "none"
        lines.append(f"scanned {s.records} record(s) of {len(s.days)} day(s): found {kinds}; "
                     f"{len(s.new_patterns)} new pattern(s), {s.new_occurrences} new "
                     f"occurrence(s), {s.new_evidence} new evidence")
        lines += [f"  {m}" for m in s.moves]
    for p in data.patterns:
        lines.append(pattern_line(p))
        lines.append(f"    evidence: {_evidence_line(p.evidence)}")
    return "\n".join(lines)


def _occurrence_lines(o: Occurrence) -> list[str]:
    lines = [f"  [{o.kind}] {o.summary}",
             (f"    session {o.session_id} ({o.agent_id}), {o.first_ts} .. {o.last_ts}, "
              f"pattern {o.pattern_id}")]
    for r in o.records:
        if not r.found:
            lines.append(f"    - {r.id} (not in the record any more)")
            continue
        error = " ERROR" if r.is_error else ""
        lines.append(f"    - {r.id} {r.kind}{error}: {' '.join(r.text.split())[:120]}")
        if r.result:
            lines.append(f"        -> {' '.join(r.result.split())[:120]}")
    return lines


def render_pattern(env: Any) -> str:
    """The pattern, its status history, its occurrences with their records."""
    data: PatternResult = env.data
    p = data.pattern
    lines = [env.message, pattern_line(p), f"  signature: {p.signature}",
             f"  seen {p.first_seen} .. {p.last_seen}"]
    if p.fix:
        lines.append(f"  proposed fix: {p.fix}" + (f" — outcome: {p.fix_outcome}"
                                                   if p.fix_outcome else ""))
    lines.append("status history:")
    lines += [f"  {t.at}  {t.from_status or '(new)'} -> {t.to_status}  by {t.by}"
              + (f": {t.note}" if t.note else "") for t in data.transitions]
    lines.append(f"occurrences ({len(data.occurrences)}):")
    for o in data.occurrences:
        lines += _occurrence_lines(o)
    return "\n".join(lines)


def render_batches(env: Any) -> str:
    """One line per batch."""
    data: BatchesResult = env.data
    lines = [env.message]
    for b in data.batches:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(b.kinds.items()))
        lines.append(f"{b.id}  {b.items}/{b.size}  opened {b.created}  {kinds}")
    return "\n".join(lines)


def render_batch(env: Any) -> str:
    """The batch's items with their records."""
    data: BatchResult = env.data
    lines = [env.message]
    for item in data.items:
        lines += _occurrence_lines(item)
    return "\n".join(lines)


def render_flag(env: Any) -> str:
    """What was flagged and where it went."""
    data: FlagResult = env.data
    said = " ".join(data.target.text.split())[:120]
    return "\n".join([env.message, f"  flagged: {data.target.id} {data.target.kind}: {said}",
                      f"  pattern {data.pattern_id}: evidence {_evidence_line(data.evidence)}"])
