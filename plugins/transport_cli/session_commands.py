"""``load`` and ``session-end``: the start and the end of an agent session (SPEC §4.1, §4.3)."""

from __future__ import annotations

import sys

import click

from echo_core.cli_kit import (
    LiteralArgsCommand,
    common_options,
    current_context,
    emit,
    json_text,
    read_text_source,
    terminal_safe,
)
from echo_core.errors import ExitCode
from echo_core.models import Envelope


def _render_load(env: Envelope) -> str:
    return str(env.data.digest)


def _render_session_end(env: Envelope) -> str:
    data = env.data
    head = "Committed:" if data.applied else "Preview (nothing written):"
    lines = [head]
    for step in data.steps:
        where = f" {step.path}" if step.path else ""
        lines.append(f"  {step.artefact:<12} {step.action:<10}{where}")
        if step.detail:
            lines.append(f"      {step.detail}")
        if step.artefact == "reflect":
            for outcome in data.reflect:
                target = f" -> {outcome.path}" if outcome.path else ""
                lines.append(f"      [{outcome.index}] {outcome.classification:<9} "
                             f"{outcome.title} (confidence {outcome.confidence:g}){target}")
                for c in outcome.candidates:
                    lines.append(f"          candidate: {c.get('slug')}  {c.get('path')}")
    lines.append(env.message)
    return "\n".join(lines)


@click.command("load")
@click.option("--brief", is_flag=True,
              help="Only the digest (scope, preferences, last session, today's log, inbox "
                   "count); without it the full texts of the key notes follow.")
@common_options
def load_command(brief: bool, as_json: bool) -> None:
    """Print what the agent should know at the start of a session. Reads only.

    \b
    The brief digest, in order: vault marker (schema, bootstrapped or not); scope with
    its date and the sessions logged since; Fact / Pattern; the last 10 Observations;
    the last session's Goal / Decisions Made / Open Threads / Suggested Next Step;
    today's Agent Log; the inbox as a count and the oldest item's age.

    The brief digest stays within $ECHO_LOAD_BUDGET characters (default 8000); a full
    load gets three times that. Over budget, observations, then the agent log, then the
    session summary are cut, each marked "(truncated)".

    Exit 78 when the vault is not initialised (run `echo-memory init`); exit 69 when it
    is unreachable (the message says to proceed without memory).
    """
    from echo_core.ops.load import load

    envelope = load(current_context(), brief=brief)
    if envelope.action == "unreachable":  # its own exit code, not emit's generic 1
        if as_json:
            click.echo(json_text(envelope.to_dict()))
        else:
            click.echo(terminal_safe(envelope.message))
        sys.exit(int(ExitCode.UNAVAILABLE))
    emit(envelope, as_json, _render_load)


BUNDLE_HELP = """Commit a session: its log, agent-log line, reflections, scope, heartbeat.

BUNDLE is a JSON file (or - for stdin). Without --apply nothing is written: every step
is previewed, and each reflect proposal is classified (create, update, inbox, gated).

\b
Example bundle:
  {"slug": "recall-index",
   "log_body": "## Goal\\nShip recall\\n\\n## Decisions Made\\n- BM25\\n\\n## Open Threads\\n- k1",
   "agent_log_line": "- 2026-03-01: shipped the recall index",
   "scope": "Recall is done; next the MCP server",
   "reflect": [{"title": "Operator prefers pytest", "kind": "semantic",
                "body": "Use pytest, never unittest.", "tags": ["testing"],
                "confidence": 0.9}]}

\b
Keys: slug (required, kebab-case), log_body (required; its ## Goal, ## Decisions Made,
## Open Threads, ## Suggested Next Step sections fill the session template, anything
else goes under ## Log), agent_log_line, scope, reflect (proposals: title, body,
confidence 0..1 required; kind, tags, aliases, sources, date optional; confidence
below 0.6 goes to the inbox).

\b
With --apply, under one vault lock, in this order:
  1. _agent/sessions/<date>-<HHMM>-<slug>.md     the session log
  2. journal/daily/<date>.md ## Agent Log         the agent-log line
  3. each proposal through capture (a duplicate-gate stop is reported, not fatal)
  4. scope set (when scope is given)
  5. _agent/heartbeat/last-session.md             LAST: the commit marker
A failure before step 5 leaves the previous heartbeat as it was; re-running the same
bundle in the same minute completes it.

Exit 2 for an invalid bundle (the message names the field, e.g. reflect[2].confidence)
or when a different log already exists at that path; nothing is written then.
"""


@click.command("session-end", cls=LiteralArgsCommand, help=BUNDLE_HELP)
@click.argument("bundle_file", metavar="BUNDLE.json|-")
@click.option("--apply", "do_apply", is_flag=True,
              help="Write everything for real (default: a preview that writes nothing).")
@common_options
def session_end_command(bundle_file: str, do_apply: bool, as_json: bool) -> None:
    from echo_core.ops.session_end import read_bundle, session_end

    text = read_text_source(bundle_file, "BUNDLE.json|-")
    emit(session_end(current_context(), read_bundle(text), apply=do_apply), as_json,
         _render_session_end)


def add_to(cli: click.Group) -> None:
    """Attach this module's commands to ``cli``."""
    cli.add_command(load_command)
    cli.add_command(session_end_command)
