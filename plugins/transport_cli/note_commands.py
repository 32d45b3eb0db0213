"""Raw note verbs: ``get``, ``put``, ``append``, ``fm``, ``ls``."""

from __future__ import annotations

import json

import click

from echo_core.cli_kit import (
    LiteralArgsCommand,
    common_options,
    current_context,
    emit,
    read_text_source,
)
from echo_core.errors import usage_error
from echo_core.models import Envelope


def _render_get(env: Envelope) -> str:
    text: str = env.data.content
    if env.data.truncated:
        text += "\n… (truncated)"
    return text


@click.command("get")
@click.argument("path")
@click.option("--section", metavar="HEADING", help="Only this heading's section (e.g. 'Notes').")
@click.option("--max-chars", type=click.IntRange(min=1), metavar="N", help="Cut the output at N characters (marked as truncated).")
@common_options
def get_command(path: str, section: str | None, max_chars: int | None, as_json: bool) -> None:
    """Print the note at PATH (vault-relative, e.g. resources/people/ada.md).

    On a terminal, characters that would drive it (ESC, BEL, other control characters,
    bidi overrides such as U+202E) are shown escaped (\\x1b, \\u202e); tabs and line
    ends are kept. Piped or redirected, the note's text is printed exactly.
    With --json: content, frontmatter (parsed) and a truncated flag.
    """
    from echo_core.ops.notes_io import get_note

    emit(get_note(current_context(), path, section=section, max_chars=max_chars), as_json,
         _render_get, exact_when_piped=True)


@click.command("put")
@click.argument("path")
@click.argument("source", metavar="- | FILE")
@common_options
def put_command(path: str, source: str, as_json: bool) -> None:
    """Write the whole note at PATH from stdin (-) or a local FILE, atomically.

    Bytes are kept as given (line endings included). Example:

        printf '# Ada\\n' | echo-memory put resources/people/ada.md -
    """
    from echo_core.ops.notes_io import put_note

    emit(put_note(current_context(), path, read_text_source(source, "- | FILE")), as_json)


@click.command("append", cls=LiteralArgsCommand)
@click.argument("path")
@click.argument("line")
@common_options
def append_command(path: str, line: str, as_json: bool) -> None:
    """Append LINE to the note at PATH unless that exact line is already there.

    Creates the note when missing. Running it twice changes nothing the second time.
    A LINE starting with '-' (a bullet) is taken as the line, not as an option.
    """
    from echo_core.ops.notes_io import append_line

    emit(append_line(current_context(), path, line), as_json)


@click.command("fm", cls=LiteralArgsCommand)
@click.argument("path")
@click.argument("key")
@click.argument("value", metavar="JSON-VALUE")
@common_options
def fm_command(path: str, key: str, value: str, as_json: bool) -> None:
    """Set frontmatter KEY of the note at PATH to a JSON value; nothing else changes.

    \b
    Examples:
      echo-memory fm projects/active/echo.md status '"on-hold"'
      echo-memory fm projects/active/echo.md tags '["project", "ai"]'
    """
    from echo_core.ops.notes_io import set_frontmatter

    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        raise usage_error(
            f"value {value!r} is not JSON; quote strings as JSON, e.g. '\"{value}\"'"
        ) from None
    emit(set_frontmatter(current_context(), path, key, parsed), as_json)


def _render_ls(env: Envelope) -> str:
    return "\n".join(env.data.paths) if env.data.paths else env.message


@click.command("ls")
@click.argument("folder", default="", required=False)
@common_options
def ls_command(folder: str, as_json: bool) -> None:
    """List the files under FOLDER (default: the whole vault), one path per line."""
    from echo_core.ops.notes_io import list_notes

    emit(list_notes(current_context(), folder), as_json, _render_ls)


def add_to(cli: click.Group) -> None:
    """Attach this module's commands to ``cli``."""
    for command in (get_command, put_command, append_command, fm_command, ls_command):
        cli.add_command(command)
