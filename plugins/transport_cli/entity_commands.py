"""``resolve`` and ``link``: find entities by name and connect notes."""

from __future__ import annotations

import click

from echo_core.cli_kit import common_options, current_context, emit
from echo_core.models import Envelope


def _render_resolve(env: Envelope) -> str:
    data = env.data
    if data.match:
        aliases = f" (aliases: {', '.join(data.aliases)})" if data.aliases else ""
        return f"{data.slug}  {data.kind}  {data.path}  {data.title}{aliases}"
    lines = [env.message, f"suggested slug for a new entity: {data.suggest_slug}"]
    lines += [f"  candidate {c['slug']}  {c['kind']}  {c['path']}  (score {c['score']})"
              for c in data.candidates]
    return "\n".join(lines)


@click.command("resolve")
@click.argument("mention")
@click.option("--kind", "-k", metavar="KIND", help="Only entities of this kind.")
@common_options
def resolve_command(mention: str, kind: str | None, as_json: bool) -> None:
    """Find the entity MENTION names (slug, title or alias, any case or punctuation).

    A miss prints a suggested slug and the closest candidates; the exit code is 0 either
    way (check "match" in --json output).
    """
    from echo_core.ops.resolve import resolve

    emit(resolve(current_context(), mention, kind=kind), as_json, _render_resolve)


@click.command("link")
@click.argument("a")
@click.argument("b")
@common_options
def link_command(a: str, b: str, as_json: bool) -> None:
    """Link two notes both ways under their `## Related` headings.

    A and B are note paths (ending in .md) or entity names/slugs. Running it again
    changes nothing.
    """
    from echo_core.ops.resolve import link

    emit(link(current_context(), a, b), as_json)


def add_to(cli: click.Group) -> None:
    """Attach this module's commands to ``cli``."""
    cli.add_command(resolve_command)
    cli.add_command(link_command)
