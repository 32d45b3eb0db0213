"""``lint``: the vault's consistency checks (SPEC §5.2), declared once. Over MCP the
same checks run as ``echo_health`` with ``deep=true`` (``vault_verbs.DOCTOR``)."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.actions import Action
from echo_core.models import Envelope
from echo_core.operations import Access, CliParam, CliSurface, Operation, lazy_type, param
from echo_core.verbs.skill_texts import HEALTH_SKILL


def _check_names() -> tuple[str, ...]:
    from echo_core.ops.lint.registry import CHECK_NAMES

    return CHECK_NAMES


@attrs.frozen(kw_only=True)
class LintParams:
    """What ``lint`` takes."""

    fix: bool = param(False, help="List the repairs of the mechanical findings "
                      "(a dry run: nothing is written without --apply).")
    apply: bool = param(False, help="With --fix: make the repairs, then lint again.")
    check: tuple[str, ...] = param((), help="Run only this check (repeat, or a,b).",
                                   choices=_check_names,
                                   cli=CliParam(metavar="NAME", split_commas=True))


def _access(p: LintParams) -> Access:
    return "write" if p.fix and p.apply else "read"


def render_lint(env: Envelope[Any]) -> str:
    """Findings grouped by check, repairs, the lowest quality scores, the summary."""
    from echo_core.ops.lint.report import render_lint as render

    fix = bool(env.data.repairs) or env.action == Action.DRY_RUN
    applied = env.action == Action.LINTED and bool(env.data.repairs)
    return render(env.data, env.message, fix=fix, applied=applied)


def run_lint(ctx: Any, p: LintParams) -> Envelope[Any]:
    """``ops.lint.run.lint``; 2 (nothing run) for ``apply`` without ``fix``: apply makes
    the repairs fix lists, and a plain lint run instead would look like it did."""
    from echo_core.errors import usage_error
    from echo_core.operations.spelling import spell
    from echo_core.ops.lint.run import lint

    if p.apply and not p.fix:
        raise usage_error(f"{spell('apply')} makes the repairs {spell('fix')} lists: give "
                          f"both ({spell('fix')} alone shows them first, writing nothing)")
    return lint(ctx, p.check, fix=p.fix, apply=p.apply)


def _help() -> str:
    from echo_core.ops.lint.registry import CHECKS

    width = max(len(c.name) for c in CHECKS)
    rows = "\n".join(f"  {c.name:<{width}}  {'--fix repairs it' if c.mechanical else ''}"
                     .rstrip() for c in CHECKS)
    return f"""Check the vault: links, orphans, routes, frontmatter, index drift, scope.

Reads every note once and reports what is wrong, grouped by check: each
finding gives the note's path, the problem and the fix. The checks (the
mechanical ones say so):

\b
{rows}

--fix lists the repairs (a dry run); --fix --apply makes them (one
frontmatter line each, or an expired working note archived as sweep --decay
archives it; the old version kept in history; the index repaired
from the notes), then lints again. --json adds every finding and a quality
score 0..1 for every entity note (frontmatter, body, links, freshness); the
report shows the lowest few. The score is information, not a violation.

\b
Exit codes: 0 clean, 1 findings remain, 2 usage (an unknown --check, or
--apply without --fix)."""


LINT = Operation(
    "lint", "Check the vault: links, orphans, routes, frontmatter, index drift, scope.",
    ("Check the vault's notes for broken links, orphans, typed notes outside their "
     "kind's folder (a person's own notes are left alone), "
     "incomplete frontmatter, index drift, stale scope, expired working notes, "
     "duplicates and contradictions. Returns each finding with its fix."),
    LintParams, run_lint, lazy_type("echo_core.ops.lint.model", "LintResult"),
    access=_access, render=render_lint, mcp=None, skill=HEALTH_SKILL,
    cli=CliSurface(help=_help()),
)
