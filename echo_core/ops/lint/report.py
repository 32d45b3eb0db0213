"""The human report of a lint run: findings grouped by check (each: path, what is
wrong, the fix), the repairs made or proposed, and the lowest quality scores."""

from __future__ import annotations

from typing import Any

from echo_core.ops.lint.quality import lowest

MAX_PER_CHECK = 50


def _check_lines(check: Any, findings: list[Any], fix: bool) -> list[str]:
    mark = " (mechanical)" if check.mechanical else ""
    lines = [f"{check.name}: {check.count}{mark} - {check.description}"]
    for finding in findings[:MAX_PER_CHECK]:
        lines.append(f"  {finding.path}: {finding.problem}")
        if finding.repair is not None and fix:
            lines.append(f"    repair: {finding.repair.change}")
        else:
            lines.append(f"    fix: {finding.fix}")
    if len(findings) > MAX_PER_CHECK:
        lines.append(f"  ... and {len(findings) - MAX_PER_CHECK} more (--json lists all)")
    return lines


def render_lint(result: Any, message: str, *, fix: bool, applied: bool) -> str:
    """The report (see the module docstring); ``fix``: show the repairs of mechanical
    findings instead of their fixes; ``applied``: the repairs were made (list them)."""
    by_check: dict[str, list[Any]] = {}
    for finding in result.findings:
        by_check.setdefault(finding.check, []).append(finding)
    lines: list[str] = []
    for check in result.checks:
        if check.count:
            lines.extend(_check_lines(check, by_check[check.name], fix))
    if applied:
        made = [r for r in result.repairs if r.applied]
        left = [r for r in result.repairs if not r.applied]
        if made:
            lines.append(f"repaired: {len(made)}")
            lines.extend(f"  {r.path}: {r.change}" for r in made)
        if left:
            lines.append(f"not repaired (changed meanwhile, unreadable or locked; run lint "
                         f"again): {len(left)}")
            lines.extend(f"  {r.path}: {r.change}" for r in left)
    weakest = lowest(result.scores)
    if weakest:
        lines.append("lowest quality (0..1; information, not a violation):")
        lines.extend(f"  {s.score:.2f}  {s.path}" for s in weakest)
    lines.append(message)
    return "\n".join(lines)
