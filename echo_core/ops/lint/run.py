"""``lint`` (SPEC §5.2): read the vault once, run the chosen checks on it, score the
entity notes; with ``fix`` propose the mechanical repairs, with ``apply`` too make them
and lint again, so the findings returned are those still there.

``ok`` is False while any finding remains (the CLI exits 1), True on a clean vault.
A person's own notes outside echo-memory's folders are no findings: the message counts
them once (``layout_checks.own_notes``).
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

from echo_core.actions import Action
from echo_core.bulk_work import collector_paused
from echo_core.forked_work import ForkedWork, start_forked
from echo_core.models import Envelope
from echo_core.ops.lint.layout_checks import own_notes
from echo_core.ops.lint.model import CheckCount, CheckInfo, Finding, LintResult
from echo_core.ops.lint.quality import quality_scores
from echo_core.ops.lint.registry import selected
from echo_core.ops.lint.repairs import apply_repairs
from echo_core.ops.lint.snapshot import VaultSnapshot, read_snapshot

if TYPE_CHECKING:
    from echo_core.context import EchoContext


#: From this many notes on, a check marked ``apart`` runs in a forked child beside the
#: others (below it, the fork costs more than it saves).
APART_MIN_NOTES = 5000


def _findings(check: CheckInfo, snap: VaultSnapshot) -> list[Finding]:
    return list(check.run(snap))


def run_checks(snap: VaultSnapshot, checks: tuple[CheckInfo, ...]) -> tuple[Finding, ...]:
    """Every finding of ``checks`` on ``snap``, grouped by check in registry order. On a
    large vault the checks marked ``apart`` run on another core meanwhile (the same
    findings either way: ``echo_core.forked_work`` computes them here when it cannot)."""
    apart: dict[str, ForkedWork[list[Finding]]] = {}
    if len(snap.notes) >= APART_MIN_NOTES and len(checks) > 1:
        apart = {c.name: start_forked(functools.partial(_findings, c, snap))
                 for c in checks if c.apart}
    try:
        found: list[Finding] = []
        for check in checks:
            work = apart.get(check.name)
            found.extend(work.result() if work is not None else check.run(snap))
    finally:
        for work in apart.values():
            work.cancel()
    return tuple(found)


def counts(findings: tuple[Finding, ...], checks: tuple[CheckInfo, ...]) -> tuple[CheckCount, ...]:
    """Findings per check, for every check run (zero included)."""
    tally: dict[str, int] = {}
    for finding in findings:
        tally[finding.check] = tally.get(finding.check, 0) + 1
    return tuple(CheckCount(c.name, tally.get(c.name, 0), c.mechanical, c.description)
                 for c in checks)


def _message(result: LintResult, fix: bool, apply: bool) -> str:
    found = len(result.findings)
    done = sum(1 for r in result.repairs if r.applied)
    head = f"{result.notes} notes: "
    if apply and fix:
        head += f"{done} of {len(result.repairs)} repairs made; "
    own = ""
    if result.own_notes:
        own = (f". {result.own_notes} note{' is' if result.own_notes == 1 else 's are'} "
               "outside echo-memory's folders; that is fine for your own notes")
    if not found:
        return head + "clean" + own
    checks = sum(1 for c in result.checks if c.count)
    mending = sum(1 for f in result.findings if f.repair is not None)
    tail = ""
    if mending and not apply:
        tail = (f"; {mending} mechanical (" + ("the repairs below" if fix else
                "`echo-memory lint --fix` lists the repairs") + ")")
    return head + f"{found} finding{'s' if found != 1 else ''} in {checks} " \
        f"check{'s' if checks != 1 else ''}{tail}{own}"


@collector_paused()
def lint(ctx: EchoContext, checks: tuple[str, ...] = (), *, fix: bool = False,
         apply: bool = False, score: bool = True) -> Envelope[LintResult]:
    """Run lint (see the module docstring). ``checks``: names to run (all when empty;
    an unknown name exits 2); ``score=False`` leaves out the quality scores."""
    start = time.perf_counter()
    chosen = selected(checks)
    snap = read_snapshot(ctx)
    findings = run_checks(snap, chosen)
    repairs = tuple(f.repair for f in findings if f.repair is not None) if fix else ()
    if fix and apply and repairs:
        repairs = apply_repairs(ctx, snap, repairs)
        snap = read_snapshot(ctx)
        findings = run_checks(snap, chosen)
    scores = quality_scores(snap) if score else ()
    own = len(own_notes(snap)) if any(c.name == "outside-route" for c in chosen) else 0
    result = LintResult(len(snap.notes), findings, counts(findings, chosen), repairs,
                        scores, round(time.perf_counter() - start, 3), own)
    action = Action.DRY_RUN if fix and not apply else Action.LINTED
    warnings = tuple(f"{p} is not UTF-8 text; lint skipped it" for p in snap.unreadable)
    return Envelope(not findings, action, _message(result, fix, apply), result, warnings)
