"""``init``, ``doctor`` (the MCP ``echo_health``) and ``flush``, declared once."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import CliParam, CliSurface, McpSurface, Operation, lazy_type, param
from echo_core.verbs.skill_texts import DOCTOR_SKILL


@attrs.frozen(kw_only=True)
class InitParams:
    """What ``init`` takes."""

    new: bool = param(False, help="Create a new empty vault even where this machine used "
                      "one that is missing now (otherwise refused: mount or restore the old "
                      "one instead).")
    scaffold: bool = param(False, help="Write the full layout (kind folders with READMEs, "
                           "inbox, templates) even in a folder that already holds notes, "
                           "where init otherwise adds only its own files under _agent/.")


def render_init(env: Envelope[Any]) -> str:
    """What was created."""
    return "\n".join([env.message, *(f"  + {path}" for path in env.data.created)])


def run_init(ctx: Any, p: InitParams) -> Envelope[Any]:
    """``ops.init.init_vault``."""
    from echo_core.ops.init import init_vault

    return init_vault(ctx, new=p.new, scaffold=p.scaffold)


INIT = Operation(
    "init", "Make the folder a vault: marker and memory files (full layout if empty).",
    ("Make the folder a vault: the marker and the memory's files under _agent/, plus the "
     "full layout (folders, templates) in an empty folder; existing files are never "
     "changed. Use it once when setting up memory. Returns what was created."),
    InitParams, run_init, lazy_type("echo_core.ops.init", "InitResult"), access="write",
    render=render_init, mcp=None, needs_vault=False,
    cli=CliSurface(help="""Make the folder a vault: marker and memory files (full layout if empty).

In an empty folder init writes the whole layout: the marker and memory files under
_agent/, the kind folders with a README each, the inbox and the templates. In a folder
that already holds notes (an Obsidian vault) it adds only its own files under _agent/;
each folder is made when first written (--scaffold adds the full layout anyway).
Safe to run again: existing files are never changed, so a second run writes nothing.
Where a vault this machine used has gone missing (a drive not mounted), init refuses
to put a new empty vault in its place unless --new is given."""),
)


@attrs.frozen(kw_only=True)
class DoctorParams:
    """What ``doctor`` / ``echo_health`` take."""

    deep: bool = param(False, help="Also run lint after the readiness checks: broken "
                       "links, orphans, index drift, stale scope, incomplete frontmatter "
                       "and the rest; the result adds a lint line, the count per check "
                       "and every finding (`lint`).", cli=None)


#: Lint findings the readable doctor report lists (the structured result has them all).
_LINT_SHOWN = 20


def render_doctor(env: Envelope[Any]) -> str:
    """Each check as ok / WARN / FAIL with its fix."""
    marks = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}
    lines = []
    for check in env.data.checks:
        line = f"[{marks[check.status]}] {check.name}: {check.detail}"
        if check.fix and check.status != "ok":
            line += f"\n       fix: {check.fix}"
        lines.append(line)
    report = getattr(env.data, "lint", None)
    if report is not None and report.findings:
        shown = report.findings[:_LINT_SHOWN]
        lines.extend(f"  {f.check}: {f.path}: {f.problem}" for f in shown)
        if len(report.findings) > len(shown):
            lines.append(f"  ... and {len(report.findings) - len(shown)} more")
    lines.append(env.message)
    return "\n".join(lines)


def run_doctor(ctx: Any, p: DoctorParams) -> Envelope[Any]:
    """``ops.doctor.run_doctor``; with ``deep`` lint runs after it (SPEC §5.2)."""
    from echo_core.ops.doctor import run_doctor as doctor

    envelope = doctor(ctx)
    if p.deep:
        from echo_core.ops.lint.health import deep_doctor

        envelope = deep_doctor(ctx, envelope)
    return envelope


DOCTOR = Operation(
    "doctor", "Check readiness: config (and which source won), vault, marker, schema, plugins.",
    ("Check that memory works: config, vault reachable, plugins, marker and schema. Use "
     "it when memory tools fail or during setup; deep=true also checks the notes "
     "(broken links, orphans, index drift, stale scope, ...). Returns each check as ok, "
     "warn or fail with the fix; ok=false when any check fails."),
    DoctorParams, run_doctor, lazy_type("echo_core.ops.lint.health", "DeepDoctorResult"),
    profile="core", render=render_doctor, mcp=McpSurface(tool="echo_health"),
    skill=DOCTOR_SKILL, needs_vault=False, needs_config=False,
    cli=CliSurface(help="""Check readiness: config (and which source won), vault, marker, schema, plugins.

Every check runs even when an earlier one fails (a broken config file is reported and
the defaults are checked in its place). Exits 1 when a check fails; each problem line
says how to fix it."""),
)


@attrs.frozen(kw_only=True)
class FlushParams:
    """What ``flush`` takes."""

    dismiss: tuple[str, ...] = param(
        (), help="Dismiss the outbox record ID, one flagged needs attention: mark it done "
        "without replaying it (repeat, or a,b). The outbox file keeps a line saying so.",
        cli=CliParam(metavar="ID", split_commas=True))


def render_flush(env: Envelope[Any]) -> str:
    """What was replayed, anything not synced, and how to clear what needs attention."""
    lines = [env.message]
    for item in env.data.items:
        if item.outcome != "synced":
            lines.append(f"  {item.outcome}: {item.op} {item.id}  {item.detail}")
    flagged = [item.id for item in env.data.items if item.outcome == "needs_attention"]
    if flagged:
        which = flagged[0] if len(flagged) == 1 else "ID"
        lines.append("Once a write that needs attention is settled (captured again with "
                     "--merge-into or --force, or not wanted), clear it: "
                     f"`echo-memory flush --dismiss {which}`")
    return "\n".join(lines)


def run_flush(ctx: Any, p: FlushParams) -> Envelope[Any]:
    """``ops.outbox.flush``, dismissing ``p.dismiss`` first."""
    from echo_core.ops.outbox import flush

    return flush(ctx, dismiss=p.dismiss)


FLUSH = Operation(
    "flush", "Replay the offline outbox: writes queued while the vault was unreachable.",
    ("Replay the writes queued while the vault was unreachable. Use it once the vault is "
     "back (load also does it). Returns each queued write's outcome."),
    FlushParams, run_flush, lazy_type("echo_core.ops.outbox", "FlushResult"), access="write",
    render=render_flush, mcp=None,
    cli=CliSurface(help="""Replay the offline outbox: writes queued while the vault was unreachable.

Each queued capture runs through capture again (routing and the duplicate gate see
the vault as it is now). A capture the gate stops is kept and flagged "needs
attention"; later ones still land, and every flush tries it again. To settle it,
capture it again with --merge-into SLUG or --force (as its message says), or decide
you do not want it; then clear it with `echo-memory flush --dismiss ID` (the ID flush
lists). A dismissed record is marked done without being replayed, and the outbox file
keeps a line saying when it was dismissed and why it needed attention.
A write the vault fails (a flaky server's error on one note) stays queued and the
flush goes on: later writes to the same note are held back to the next flush, so
one note's writes land in order, while writes to other notes land now. The flush
stops when the vault stops answering, or after 3 failed writes in a row.
`load` flushes automatically."""),
)
