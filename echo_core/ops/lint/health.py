"""``doctor`` with ``deep`` (the MCP ``echo_health(deep=true)``): the readiness checks,
then lint (SPEC §5.2, §5.3).

Lint runs only when the vault passed its readiness checks (reachable, marked); its
outcome is one more check line (``lint``: ok when clean, warn with the counts when not,
the fix naming the verbs) and its findings ride along in ``lint``: the count of every
check and each finding. Lint findings are not readiness failures: they leave ``ok`` as
the readiness checks set it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from echo_core.errors import EchoError
from echo_core.models import Envelope
from echo_core.ops.doctor import Check, DoctorResult
from echo_core.ops.lint.model import Finding
from echo_core.ops.lint.run import lint
from echo_core.protocols import BackendUnavailable

if TYPE_CHECKING:
    from echo_core.context import EchoContext

#: Readiness checks lint needs passed: without them there is no vault to read.
NEEDED = ("vault", "marker")


@attrs.frozen
class HealthLint:
    """What lint found: notes read, findings per check (every check), each finding."""

    notes: int
    counts: dict[str, int]
    findings: tuple[Finding, ...]


@attrs.frozen
class DeepDoctorResult(DoctorResult):
    """The readiness checks (a ``lint`` line last) and, with ``deep``, lint's findings."""

    lint: HealthLint | None = None


def _lint_check(report: HealthLint, mechanical: int) -> Check:
    found = len(report.findings)
    if not found:
        return Check("lint", "ok", f"{report.notes} notes, no findings")
    counts = ", ".join(f"{name} {n}" for name, n in report.counts.items() if n)
    fix = "run `echo-memory lint` for each finding and its fix"
    if mechanical:
        fix += f"; `echo-memory lint --fix --apply` repairs the {mechanical} mechanical ones"
    return Check("lint", "warn", f"{found} finding{'s' if found != 1 else ''}: {counts}", fix)


def deep_doctor(ctx: EchoContext, readiness: Envelope[Any]) -> Envelope[DeepDoctorResult]:
    """``readiness`` (doctor's envelope) with lint's check line and findings added."""
    checks: tuple[Check, ...] = tuple(readiness.data.checks)
    fields = {f.name: getattr(readiness.data, f.name) for f in attrs.fields(type(readiness.data))}
    failed = [c.name for c in checks if c.status == "fail" and c.name in NEEDED]
    report: HealthLint | None = None
    if failed:
        line = Check("lint", "warn", f"not run: the {failed[0]} check failed",
                     "fix that first, then run `echo-memory lint`")
    else:
        try:
            env = lint(ctx, score=False)
        except (EchoError, BackendUnavailable, OSError) as exc:
            line = Check("lint", "fail", f"lint could not run: {exc}",
                         "run `echo-memory lint` to see the error")
        else:
            result = env.data
            report = HealthLint(result.notes, {c.name: c.count for c in result.checks},
                                result.findings)
            line = _lint_check(report, sum(1 for f in result.findings if f.repair))
    fields["checks"] = (*checks, line)
    data = DeepDoctorResult(**fields, lint=report)
    ok = readiness.ok and line.status != "fail"
    message = readiness.message if line.status == "ok" else (
        f"{readiness.message}; lint: {line.detail}")
    return Envelope(ok, readiness.action, message, data, readiness.warnings)
