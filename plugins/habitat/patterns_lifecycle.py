"""A pattern's status and severity: the moves allowed between statuses and the rules the
registry applies on its own when evidence arrives.

Statuses (``STATUSES``)::

    monitoring ──> actionable ──> proposed_fix ──> fixed
        │  ^           │  ^            │             │
        │  └───────────┘  └────────────┘ (fix       │ (recurred after
        v                                 failed)    v  the fix)
    dismissed <── (from any but fixed)           actionable

* ``monitoring``: seen, not yet worth acting on (a new pattern starts here);
* ``actionable``: recurring (``ACTIONABLE_RECURRENCE`` occurrences), severe (``high``)
  or flagged by the operator — the registry moves it here on its own;
* ``proposed_fix``: someone proposed a fix (``PatternStore.propose_fix`` stores its
  text; the FIX arc of a later issue attaches here);
* ``fixed``: the fix was applied and judged to work (``PatternStore.fix_outcome``);
  a new occurrence after that moves it back to ``actionable`` ("recurred after the fix");
* ``dismissed``: the operator decided it is not a problem; evidence still accrues,
  nothing moves it back but the operator (``dismissed -> monitoring``).

Every move, by a person or by a rule, is a row of the registry's ``transitions`` table
(from, to, when, by whom, why): the history the FIX and SWAP arcs read.

Where the later arcs attach: a FIX arc reads ``PatternStore.list("actionable")`` (with
each pattern's evidence ids, to read the records), proposes with ``propose_fix`` (its
text kept in ``fix``) and reports with ``fix_outcome`` (worked: ``fixed``; else back to
``actionable``, the outcome kept). A SWAP arc (replacing a failing tool, model or
prompt) proposes the same way, its ``fix`` text naming the swap. An arc that needs more
than those fields keeps its own table keyed by pattern id in the same file (the
registry's tables are created ``IF NOT EXISTS``; nothing here needs to migrate).
"""

from __future__ import annotations

from plugins.habitat.distil_model import SEVERITIES

__all__ = ["ACTIONABLE_RECURRENCE", "ALLOWED", "STATUSES", "auto_status", "can_move",
           "pattern_severity"]

STATUSES = ("monitoring", "actionable", "proposed_fix", "fixed", "dismissed")
#: status -> the statuses a person (or a later arc) may move it to.
ALLOWED: dict[str, frozenset[str]] = {
    "monitoring": frozenset({"actionable", "dismissed"}),
    "actionable": frozenset({"monitoring", "proposed_fix", "dismissed"}),
    "proposed_fix": frozenset({"actionable", "fixed", "dismissed"}),
    "fixed": frozenset({"actionable"}),
    "dismissed": frozenset({"monitoring"}),
}
#: Occurrences after which a monitored pattern becomes actionable on its own.
ACTIONABLE_RECURRENCE = 3
#: Occurrences after which a pattern's severity is raised one level.
ESCALATE_RECURRENCE = 5


def can_move(current: str, to: str) -> bool:
    """Whether ``current -> to`` is one of the ``ALLOWED`` moves."""
    return to in ALLOWED.get(current, frozenset())


def pattern_severity(occurrence_severities: list[str], recurrence: int) -> str:
    """The worst severity of a pattern's occurrences, one level higher once it recurred
    ``ESCALATE_RECURRENCE`` times."""
    rank = max((SEVERITIES.index(s) for s in occurrence_severities if s in SEVERITIES),
               default=0)
    if recurrence >= ESCALATE_RECURRENCE:
        rank = min(rank + 1, len(SEVERITIES) - 1)
    return SEVERITIES[rank]


def auto_status(status: str, *, recurrence: int, severity: str, flags: int,
                recurred_after_fix: bool) -> tuple[str, str] | None:
    """The move the registry makes on its own after new evidence, as ``(to, why)``, or
    None: ``monitoring -> actionable`` when the pattern recurred enough, is severe or
    was flagged; ``fixed -> actionable`` when it occurred again after the fix."""
    if status == "monitoring":
        if flags:
            return "actionable", "flagged by the operator"
        if severity == "high":
            return "actionable", "severity high"
        if recurrence >= ACTIONABLE_RECURRENCE:
            return "actionable", f"recurred {recurrence} times"
    if status == "fixed" and recurred_after_fix:
        return "actionable", "recurred after the fix"
    return None
