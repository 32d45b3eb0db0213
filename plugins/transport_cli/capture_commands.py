"""``capture``: the write path from the command line."""

from __future__ import annotations

import click

from echo_core.cli_kit import (
    LiteralArgsCommand,
    common_options,
    current_context,
    emit,
    read_text_source,
)
from echo_core.models import Envelope


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    """Accept repeated options and comma-separated lists alike."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _render(env: Envelope) -> str:
    data = env.data
    lines = [env.message]
    if env.action in ("duplicate-gate", "dry-run:duplicate-gate"):
        lines.append("candidates:")
        lines += [f"  {c['slug']}  {c['path']}  (score {c['score']})" for c in data.candidates]
    for path in data.links_added:
        lines.append(f"  linked {path}")
    for alias in data.aliases_learned:
        lines.append(f"  learned alias {alias!r}")
    if data.near_duplicates and env.action != "duplicate-gate":
        names = ", ".join(f"{c['title']} ({c['kind']})" for c in data.near_duplicates)
        lines.append(f"  similar: {names}")
    return "\n".join(lines)


@click.command("capture", cls=LiteralArgsCommand)
@click.argument("title")
@click.argument("body_source", metavar="[-]", required=False)
@click.option("--kind", "-k", metavar="KIND", help="Kind of note (person, company, concept, "
              "reference, project, area, meeting, decision, semantic, episodic, working, "
              "skill). Without it the capture goes to the inbox.")
@click.option("--body", "-b", metavar="TEXT", help="Body text (or pass - to read it from stdin).")
@click.option("--tags", multiple=True, metavar="A,B", help="Tags (repeat or comma-separate).")
@click.option("--aliases", multiple=True, metavar="A,B", help="Other names of the entity.")
@click.option("--sources", multiple=True, metavar="A,B", help="Where this came from (URLs, notes).")
@click.option("--status", metavar="STATUS", help="Status (default from the kind).")
@click.option("--date", metavar="YYYY-MM-DD", help="Date of the event (meetings, decisions, updates).")
@click.option("--domain", metavar="DOMAIN", help="Area domain: business, personal, learning, systems.")
@click.option("--merge-into", metavar="SLUG", help="Update this existing entity instead.")
@click.option("--force", is_flag=True, help="Create even if the duplicate gate objects.")
@click.option("--dry-run", is_flag=True, help="Show what would happen; write nothing.")
@common_options
def capture_command(title: str, body_source: str | None, kind: str | None, body: str | None,
                    tags: tuple[str, ...], aliases: tuple[str, ...], sources: tuple[str, ...],
                    status: str | None, date: str | None, domain: str | None,
                    merge_into: str | None, force: bool, dry_run: bool, as_json: bool) -> None:
    """Remember TITLE: create or update the entity it names, or add it to the inbox.

    \b
    Examples:
      echo-memory capture "Ada Lovelace" --kind person --body "Wrote the first program."
      echo-memory capture "Vantage Systems" -k company - < notes.txt
      echo-memory capture "call the bank"              # no --kind: goes to the inbox

    An existing entity (same name, alias or slug) gets a dated bullet with the whole body.
    A new name too close to an existing one of the same kind stops at the duplicate gate
    (exit 76): re-run with --merge-into SLUG to update it, or --force to create anyway.
    """
    from echo_core.errors import usage_error
    from echo_core.models import CaptureRequest
    from echo_core.ops.capture import capture

    if body_source not in (None, "-"):
        raise usage_error(f"unexpected argument {body_source!r}; use --body TEXT or - for stdin")
    if body_source == "-":
        if body is not None:
            raise usage_error("body: give either --body or - (stdin), not both")
        body = read_text_source("-", "body (stdin)")
    request = CaptureRequest(
        title=title, kind=kind, body=body or "", tags=_split(tags), aliases=_split(aliases),
        sources=_split(sources), status=status, date=date, domain=domain,
        merge_into=merge_into, force=force, dry_run=dry_run,
    )
    emit(capture(current_context(), request), as_json, _render)


def add_to(cli: click.Group) -> None:
    """Attach this module's commands to ``cli``."""
    cli.add_command(capture_command)
