"""The raw note verbs, declared once: ``get``, ``put``, ``append``, ``fm``, ``ls``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import (
    Bounds,
    CliArg,
    CliParam,
    CliSurface,
    McpParam,
    McpSurface,
    Operation,
    lazy_type,
    param,
)
from echo_core.text_source import read_text_source

MAX_PATH = 500
_WRITE_RESULT = lazy_type("echo_core.ops.notes_io", "WriteResult")


#: Models get the MCP cap of 500 characters; on the CLI the core's own path rules
#: (``echo_core.paths``: 32 levels, 1024 bytes) give the precise error, this only bounds argv.
CLI_PATH = CliParam(positional=True, bounds=Bounds(max_length=4096))


def _path(help: str) -> Any:
    return param(help=help, min_length=1, max_length=MAX_PATH, cli=CLI_PATH)


@attrs.frozen(kw_only=True)
class GetParams:
    """What ``get`` takes."""

    path: str = _path("Vault-relative note path, e.g. resources/people/ada-lovelace.md.")
    section: str | None = param(None, help="Only this heading's section (heading text "
                                "without #, e.g. 'Notes'; the first of that name, with a "
                                "warning when there are several). Omit for the whole note.",
                                max_length=200, cli=CliParam(metavar="HEADING"))
    # Models always get a cap (20000 by default); people see the whole note unless asked.
    max_chars: int | None = param(None, help="Cut the content at this many characters "
                                  "(truncated=true when cut).", ge=1, le=200000,
                                  cli=CliParam(metavar="N"),
                                  mcp=McpParam(bounds=Bounds(ge=100), default=20000))


class WholeNoteText(str):
    """A render's text that is a whole note as stored: where the CLI prints a note
    exactly (``exact_when_piped``, stdout not a terminal) it writes these characters and
    nothing else (no newline added), so ``get n.md > copy.md`` copies the note. A
    transport asks ``whole_note`` (true here) rather than the class."""

    whole_note = True


def render_get(env: Envelope[Any]) -> str:
    """The note's text, marked when cut; a whole note (no section, not cut) comes as
    ``WholeNoteText``."""
    text: str = env.data.content
    if env.data.truncated:
        return text + "\n… (truncated)"
    return text if env.data.section is not None else WholeNoteText(text)


def run_get(ctx: Any, p: GetParams) -> Envelope[Any]:
    """``notes_io.get_note``."""
    from echo_core.ops.notes_io import get_note

    return get_note(ctx, p.path, section=p.section, max_chars=p.max_chars)


def _get_result() -> type:
    from echo_core.ops.notes_io import GetResult

    return GetResult


GET = Operation(
    "get", "Print the note at PATH (vault-relative, e.g. resources/people/ada.md).",
    ("Read one note, or one section of it, by its vault path. Use it after recall or "
     "resolve to see a note in full. Returns content, frontmatter and truncated=true when "
     "cut at max_chars; an unknown section is a not-found error listing the headings."),
    GetParams, run_get, _get_result, render=render_get, mcp=McpSurface(tool="echo_get_note"),
    cli=CliSurface(exact_when_piped=True, help="""Print the note at PATH (vault-relative, e.g. resources/people/ada.md).

On a terminal, characters that would drive it (ESC, BEL, other control characters,
bidi overrides such as U+202E) are shown escaped (\\x1b, \\u202e); tabs and line
ends are kept. Piped or redirected, the note's text is printed exactly.

With --json: content, frontmatter (parsed) and a truncated flag."""),
)


@attrs.frozen(kw_only=True)
class PutParams:
    """What ``put`` takes."""

    path: str = _path("Vault-relative note path.")
    text: str = param(help="The whole new text of the note.", cli=None)


def _read_source(values: Mapping[str, Any]) -> Mapping[str, Any]:
    out = dict(values)
    out["text"] = read_text_source(out.pop("source"), "- | FILE")
    return out


def run_put(ctx: Any, p: PutParams) -> Envelope[Any]:
    """``notes_io.put_note``."""
    from echo_core.ops.notes_io import put_note

    return put_note(ctx, p.path, p.text)


PUT = Operation(
    "put", "Write the whole note at PATH from stdin (-) or a local FILE, atomically.",
    ("Replace the whole text of one note (the previous text is kept in its history). Use "
     "it only to write a note you have the complete new text of. Returns the path."),
    PutParams, run_put, _WRITE_RESULT, access="write", lock_param="path", mcp=None,
    cli=CliSurface(extra=(CliArg("source", "- for stdin, or a local file.",
                                 metavar="- | FILE"),), prepare=_read_source,
                   help="""Write the whole note at PATH from stdin (-) or a local FILE, atomically.

Bytes are kept as given (line endings included). Example:

    printf '# Ada\\n' | echo-memory put resources/people/ada.md -"""),
)


@attrs.frozen(kw_only=True)
class AppendParams:
    """What ``append`` takes."""

    path: str = _path("Vault-relative note path; created when absent.")
    line: str = param(help="One line of text (no line breaks), e.g. '- 2026-03-01: shipped "
                      "it'.", min_length=1, max_length=10000, cli=CliParam(positional=True))


def run_append(ctx: Any, p: AppendParams) -> Envelope[Any]:
    """``notes_io.append_line``."""
    from echo_core.ops.notes_io import append_line

    return append_line(ctx, p.path, p.line)


APPEND = Operation(
    "append", "Append LINE to the note at PATH unless that exact line is already there.",
    ("Append one line to a note unless the same line is already there. Use it for log "
     "bullets in a note you know the path of. Returns the path and whether it changed."),
    AppendParams, run_append, _WRITE_RESULT, access="write", lock_param="path",
    mcp=McpSurface(tool="echo_append_note"),
    cli=CliSurface(literal_args=True, help="""Append LINE to the note at PATH unless that exact line is already there.

Creates the note when missing. Running it twice changes nothing the second time.
A LINE starting with '-' (a bullet) is taken as the line, not as an option."""),
)


@attrs.frozen(kw_only=True)
class FrontmatterParams:
    """What ``fm`` takes."""

    path: str = _path("Vault-relative note path.")
    key: str = param(help="The frontmatter key.", min_length=1, max_length=200,
                     cli=CliParam(positional=True))
    value: Any = param(help="The new value (any JSON value).", cli=None)  # noqa: RUF009


def _parse_value(values: Mapping[str, Any]) -> Mapping[str, Any]:
    from echo_core.user_json import parse_user_json

    out = dict(values)
    raw = out.pop("json_value")
    shown = raw if len(raw) <= 60 else raw[:57] + "..."
    out["value"] = parse_user_json(raw, f"value {shown!r}",
                                   f"quote strings as JSON, e.g. '\"{shown}\"'")
    return out


def run_fm(ctx: Any, p: FrontmatterParams) -> Envelope[Any]:
    """``notes_io.set_frontmatter``."""
    from echo_core.ops.notes_io import set_frontmatter

    return set_frontmatter(ctx, p.path, p.key, p.value)


FM = Operation(
    "fm", "Set frontmatter KEY of the note at PATH to a JSON value; nothing else changes.",
    ("Set one frontmatter key of a note to a JSON value, leaving the rest of the note as "
     "it is. Use it to change a status or tags. Returns the path and whether it changed."),
    FrontmatterParams, run_fm, _WRITE_RESULT, access="write", lock_param="path", mcp=None,
    cli=CliSurface(extra=(CliArg("json_value", "The value as JSON.", metavar="JSON-VALUE"),),
                   prepare=_parse_value, literal_args=True, help="""Set frontmatter KEY of the note at PATH to a JSON value; nothing else changes.

\b
Examples:
  echo-memory fm projects/active/echo.md status '"on-hold"'
  echo-memory fm projects/active/echo.md tags '["project", "ai"]'"""),
)


@attrs.frozen(kw_only=True)
class ListParams:
    """What ``ls`` takes."""

    folder: str = param("", help="The folder (default: the whole vault).", max_length=MAX_PATH,
                        cli=CLI_PATH)


def render_ls(env: Envelope[Any]) -> str:
    """One path per line: a line break or control character inside a file's name is shown
    as an escape (``a\\x0ab.md``), so every line is one file (``--json`` gives the exact
    names)."""
    from echo_core.terminal_text import terminal_safe

    return ("\n".join(terminal_safe(p, one_line=True) for p in env.data.paths)
            if env.data.paths else env.message)


def run_ls(ctx: Any, p: ListParams) -> Envelope[Any]:
    """``notes_io.list_notes``."""
    from echo_core.ops.notes_io import list_notes

    return list_notes(ctx, p.folder)


LS = Operation(
    "ls", "List the files under FOLDER (default: the whole vault), one path per line.",
    ("List the files under a vault folder. Use it to see which notes exist in one place. "
     "Returns their vault paths."),
    ListParams, run_ls, lazy_type("echo_core.ops.notes_io", "ListResult"), render=render_ls, mcp=None,
)
