"""``recall`` and ``reindex``: the read path from the command line."""

from __future__ import annotations

import click

from echo_core.cli_kit import common_options, current_context, emit
from echo_core.models import Envelope


def _render(env: Envelope) -> str:
    data = env.data
    if not data.primary:
        return f"nothing in memory matches {data.query!r}"
    lines = []
    for hit in data.primary:
        lines.append(f"{hit.score:7.3f}  {hit.path}  [{hit.type or '-'}{', ' + hit.status if hit.status else ''}]")
        if hit.excerpt:
            lines.append(f"         {hit.excerpt}")
    if data.linked:
        lines.append("linked:")
        for hit in data.linked:
            lines.append(f"{hit.score:7.3f}  {hit.path}  (via {hit.via})")
            if hit.excerpt:
                lines.append(f"         {hit.excerpt}")
    if data.truncated:
        lines.append(f"(truncated to the budget; {data.dropped} more hits left out)")
    if data.expansions:
        lines.append(f"(expanded with: {', '.join(data.expansions)})")
    return "\n".join(lines)


@click.command("recall")
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", type=click.IntRange(1, 50), default=8, show_default=True,
              help="How many primary hits.")
@click.option("--no-linked", is_flag=True, help="Leave out notes linked from the hits.")
@click.option("--budget-chars", type=click.IntRange(min=100), metavar="N",
              help="Fit all excerpts into N characters (cut ones are marked).")
@common_options
def recall_command(query: tuple[str, ...], limit: int, no_linked: bool,
                   budget_chars: int | None, as_json: bool) -> None:
    """Search memory for QUERY: ranked notes with excerpts, plus linked notes.

    \b
    Examples:
      echo-memory recall vantage pricing decision
      echo-memory recall "who is Ada" --limit 3 --json
      echo-memory recall deploy checklist --budget-chars 1500

    Words are stemmed (deploys, deployed, deployment all match), entity aliases expand
    the query, and fresher, active notes rank a little higher.
    """
    from echo_core.ops.recall import recall

    emit(recall(current_context(), " ".join(query), limit=limit, include_linked=not no_linked,
                budget_chars=budget_chars), as_json, _render)


@click.command("reindex")
@common_options
def reindex_command(as_json: bool) -> None:
    """Rebuild the recall index from every note in the vault (with a progress bar).

    Rarely needed: the index keeps itself current as notes are written and rebuilds
    itself when missing. Use it after editing many notes outside echo-memory.
    """
    from echo_core.ops.recall_index import corpus_size, reindex

    ctx = current_context()
    if as_json:
        emit(reindex(ctx), as_json)
        return
    total = corpus_size(ctx)
    with click.progressbar(length=total, label="indexing", file=click.get_text_stream("stderr"),
                           show_pos=True) as bar:
        done = 0

        def progress(n: int) -> None:
            nonlocal done
            bar.update(n - done)
            done = n

        envelope = reindex(ctx, progress)
        bar.update(total - done)
    emit(envelope, as_json)


def add_to(cli: click.Group) -> None:
    """Attach this module's commands to ``cli``."""
    cli.add_command(recall_command)
    cli.add_command(reindex_command)
