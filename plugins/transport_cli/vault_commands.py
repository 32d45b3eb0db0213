"""Vault-level verbs: ``init``, ``doctor``, ``plugins``."""

from __future__ import annotations

import click

from echo_core.cli_kit import AppState, common_options, current_context, emit
from echo_core.models import Envelope


def _render_init(env: Envelope) -> str:
    lines = [env.message]
    for path in env.data.created:
        lines.append(f"  + {path}")
    return "\n".join(lines)


@click.command("init")
@click.option("--new", "new", is_flag=True,
              help="Create a new empty vault even where this machine used one that is "
              "missing now (otherwise refused: mount or restore the old one instead).")
@common_options
def init_command(new: bool, as_json: bool) -> None:
    """Create the vault layout (folders, templates, marker).

    Safe to run again: existing files are never changed, so a second run writes nothing.
    Where a vault this machine used has gone missing (a drive not mounted), init refuses
    to put a new empty vault in its place unless --new is given.
    """
    from echo_core.ops.init import init_vault

    emit(init_vault(current_context(), new=new), as_json, _render_init)


def _render_doctor(env: Envelope) -> str:
    marks = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}
    lines = []
    for check in env.data.checks:
        line = f"[{marks[check.status]}] {check.name}: {check.detail}"
        if check.fix and check.status != "ok":
            line += f"\n       fix: {check.fix}"
        lines.append(line)
    lines.append(env.message)
    return "\n".join(lines)


@click.command("doctor")
@common_options
def doctor_command(as_json: bool) -> None:
    """Check readiness: config (and which source won), vault, marker, schema, plugins.

    Exits 1 when a check fails; each problem line says how to fix it.
    """
    from echo_core.ops.doctor import run_doctor

    emit(run_doctor(current_context()), as_json, _render_doctor)


def _render_plugins(env: Envelope) -> str:
    lines = []
    for rec in env.data.plugins:
        head = f"{rec.name} {rec.version}".strip()
        if rec.status == "ok":
            lines.append(f"{head}  [{rec.source}]  hooks: {', '.join(rec.hooks) or '-'}")
        elif rec.status == "disabled":
            lines.append(f"{head}  DISABLED")
        else:
            lines.append(f"{head}  FAILED: {rec.error}")
    for problem in env.data.problems:
        lines.append(f"PROBLEM: {problem.message}")
    lines.append(f"{len(env.data.problems)} registration problem(s)" if env.data.problems
                 else env.message)
    return "\n".join(lines)


@click.command("plugins")
@common_options
def plugins_command(as_json: bool) -> None:
    """List plugins: name, version, hooks implemented, and status or error.

    Also checks every registration: exits 1 when a name (ranker, storage scheme, command,
    MCP tool...) is taken by two plugins or is malformed, naming the plugins; --json adds
    a `problems` list. A plugin that failed to load is shown with its error and skipped;
    set ECHO_STRICT_PLUGINS=1 to make such a failure fatal, ECHO_DISABLE_PLUGINS=a,b to
    skip some, ECHO_PLUGIN_DISTS=echo-memory,other-dist to load only the plugins of the
    distributions listed, ECHO_TRACE_PLUGINS=1 to trace every hook call on stderr.
    """
    from echo_core.ops.plugins_info import list_plugins

    state = click.get_current_context().find_object(AppState)
    assert state is not None
    emit(list_plugins(state.host), as_json, _render_plugins)


def add_to(cli: click.Group) -> None:
    """Attach this module's commands to ``cli``."""
    for command in (init_command, doctor_command, plugins_command):
        cli.add_command(command)
