"""``resolve`` and ``link``, declared once (SPEC §2.3, §2.4)."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import CliParam, CliSurface, Operation, lazy_type, param


@attrs.frozen(kw_only=True)
class ResolveParams:
    """What ``resolve`` takes."""

    mention: str = param(help="A name as written: slug, title or alias.", min_length=1,
                         max_length=300, cli=CliParam(positional=True))
    kind: str | None = param(None, help="Only entities of this kind.",
                             cli=CliParam(short="-k", metavar="KIND"))


def render_resolve(env: Envelope[Any]) -> str:
    """The match, or a suggested slug and the closest candidates."""
    data = env.data
    if data.match:
        aliases = f" (aliases: {', '.join(data.aliases)})" if data.aliases else ""
        lines = [f"{data.slug}  {data.kind}  {data.path}  {data.title}{aliases}"]
        lines += [f"  also answers to it: {c['slug']}  {c['kind']}  {c['path']}  {c['title']}"
                  for c in data.candidates]
        return "\n".join(lines)
    lines = [env.message]
    if data.suggest_slug is not None:
        lines.append(f"suggested slug for a new entity: {data.suggest_slug}")
    lines += [f"  candidate {c['slug']}  {c['kind']}  {c['path']}  (score {c['score']})"
              for c in data.candidates]
    return "\n".join(lines)


def run_resolve(ctx: Any, p: ResolveParams) -> Envelope[Any]:
    """``ops.resolve.resolve``."""
    from echo_core.ops.resolve import resolve

    return resolve(ctx, p.mention, kind=p.kind)


def _resolve_result() -> type:
    from echo_core.ops.resolve import ResolveResult

    return ResolveResult


RESOLVE = Operation(
    "resolve", "Find the entity MENTION names (slug, title or alias, any case or punctuation).",
    ("Resolve a name to the entity note it refers to (slug, title or alias, forgiving "
     "case and punctuation). Use it before capturing or linking, to reuse an existing "
     "note instead of creating a duplicate. Returns the match (slug, path, kind, title, "
     "aliases) or match=false with fuzzy candidates and a suggested slug."),
    ResolveParams, run_resolve, _resolve_result, render=render_resolve,
    cli=CliSurface(help="""Find the entity MENTION names (slug, title or alias, any case or punctuation).

A miss prints a suggested slug and the closest candidates. A name two entities of
the same kind both answer to is ambiguous: no match, every entity it names listed,
and "ambiguous" true in --json (give the slug of the one you mean). The exit code is
0 either way (check "match" in --json output)."""),
    fresh="quick",
)


@attrs.frozen(kw_only=True)
class LinkParams:
    """What ``link`` takes."""

    a: str = param(help="A note path or name.", min_length=1, max_length=500,
                   cli=CliParam(positional=True))
    b: str = param(help="Another note path or name.", min_length=1, max_length=500,
                   cli=CliParam(positional=True))


def run_link(ctx: Any, p: LinkParams) -> Envelope[Any]:
    """``ops.resolve.link``."""
    from echo_core.ops.resolve import link

    return link(ctx, p.a, p.b)


LINK = Operation(
    "link", "Link two notes both ways under their `## Related` headings.",
    ("Link two notes both ways under their Related sections. Use it when two notes "
     "belong together; give paths or exactly resolvable names. Returns both paths and "
     "whether anything changed."),
    LinkParams, run_link, lazy_type("echo_core.ops.resolve", "LinkResult"), access="write",
    cli=CliSurface(help="""Link two notes both ways under their `## Related` headings.

A and B are note paths (ending in .md) or entity names/slugs. Running it again
changes nothing."""),
    fresh="quick",
)
