"""``patch`` (the MCP ``echo_patch_note``), declared once (SPEC §6.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from echo_core.actions import Action
from echo_core.models import Envelope
from echo_core.operations import (
    Access,
    Bounds,
    CliArg,
    CliParam,
    CliSurface,
    McpSurface,
    Operation,
    lazy_type,
    param,
)
from echo_core.text_source import read_text_source
from echo_core.verbs.note_verbs import CLI_PATH, MAX_PATH

MAX_CONTENT = 100_000  # over MCP; the CLI (stdin, files) takes up to CLI_MAX_CONTENT
CLI_MAX_CONTENT = 10_000_000
_TARGET_FLAGS = ("heading", "field", "block")


@attrs.frozen(kw_only=True)
class PatchParams:
    """What ``patch`` / ``echo_patch_note`` take."""

    path: str = param(help="Vault-relative note path, e.g. projects/active/echo.md.",
                      min_length=1, max_length=MAX_PATH, cli=CLI_PATH)
    operation: Literal["append", "prepend", "replace"] = param(
        help="append (after the target's content), prepend (before it) or replace it.",
        cli=CliParam(flag="--op"))
    target_type: Literal["heading", "field", "block"] = param(
        help="What target names: a heading, a frontmatter field or a block id.",
        cli=CliParam(from_prepare=True))
    target: str = param(help="The heading ('Log', '## Log', nested 'Log::2026'), the "
                        "frontmatter key ('tags') or the block id ('^decision-1').",
                        min_length=1, max_length=500, cli=CliParam(from_prepare=True))
    content: str = param(help="The text to put there (for a field: the value as typed "
                         "after 'key:', e.g. on-hold or 2026-03-05; a ' #' is kept as "
                         "text).", min_length=1,
                         max_length=MAX_CONTENT, cli=CliParam(
                             from_prepare=True, bounds=Bounds(max_length=CLI_MAX_CONTENT)))
    dry_run: bool = param(False, help="Show the diff only; nothing is written.")


def _prepare(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """``--heading`` / ``--field`` / ``--block`` -> target; CONTENT, ``-`` or ``--file``
    -> content."""
    from echo_core.errors import usage_error

    out = dict(values)
    given = [(flag, out.pop(flag)) for flag in _TARGET_FLAGS]
    targets = [(flag, value) for flag, value in given if value is not None]
    if len(targets) != 1:
        raise usage_error("target: give exactly one of --heading HEADING, --field KEY or "
                          "--block ID")
    out["target_type"], out["target"] = targets[0]
    source, file = out.pop("content_source", None), out.pop("file", None)
    if (source is None) == (file is None):
        raise usage_error("content: give the text as an argument, - to read it from stdin, "
                          "or --file FILE (one of them)")
    if file is not None:
        out["content"] = read_text_source(file, "content (--file)")
    elif source == "-":
        out["content"] = read_text_source("-", "content (stdin)")
    else:
        out["content"] = source
    return out


def render_patch(env: Envelope[Any]) -> str:
    """The diff (when there is one), then what was done."""
    diff: str = env.data.diff
    if env.action == Action.UNCHANGED or not diff:
        return env.message
    return f"{diff.rstrip()}\n{env.message}"


def run_patch(ctx: Any, p: PatchParams) -> Envelope[Any]:
    """``ops.patch.patch_note``."""
    from echo_core.ops.patch import patch_note

    return patch_note(ctx, p.path, p.operation, p.target_type, p.target, p.content,
                      dry_run=p.dry_run)


def patch_access(p: PatchParams) -> Access:
    """A write unless it is a dry run."""
    return "read" if p.dry_run else "write"


PATCH = Operation(
    "patch", "Append, prepend or replace under a heading, a frontmatter field or a ^block.",
    ("Append, prepend or replace one part of a note: the content under a heading (nested "
     "as 'Log::2026'), a frontmatter field, or the block ending in a ^block-id. Use it to "
     "edit a note you know the path of without rewriting it; an unknown heading is a "
     "not-found error listing the note's real headings. Returns whether the note changed "
     "and the unified diff (dry_run=true writes nothing)."),
    PatchParams, run_patch, lazy_type("echo_core.ops.patch", "PatchResult"),
    access=patch_access, lock_param="path", render=render_patch,
    mcp=McpSurface(tool="echo_patch_note"),
    cli=CliSurface(
        extra=(CliArg("content_source", "The text, or - to read it from stdin (or use "
                      "--file).", metavar="CONTENT|-", required=False),
               CliArg("heading", "Target the section under this heading ('Log', '## Log', "
                      "'Log::2026').", metavar="HEADING", required=False, flag="--heading"),
               CliArg("field", "Target this frontmatter key.", metavar="KEY",
                      required=False, flag="--field"),
               CliArg("block", "Target the block ending in ^ID.", metavar="ID",
                      required=False, flag="--block"),
               CliArg("file", "Read the content from this local file.", metavar="FILE",
                      required=False, flag="--file")),
        prepare=_prepare, literal_args=True,
        help="""Append, prepend or replace under a heading, a frontmatter field or a ^block.

\b
Examples:
  echo-memory patch projects/active/echo.md --op append --heading Log \\
      "- 2026-03-01: shipped the patch verb"
  echo-memory patch projects/active/echo.md --op replace \\
      --heading "Log::2026" - < log.md
  echo-memory patch projects/active/echo.md --op replace \\
      --field status on-hold
  echo-memory patch projects/active/echo.md --op append --field tags ai
  echo-memory patch decisions/2026-03-01-db.md --op replace \\
      --block ^choice "Use Postgres."

Heading: the section runs from the heading line to the next heading of the
same or a higher level (nested headings are part of it); of several sections
with that name the first is used, and a warning says so. append adds after
its last non-blank line, prepend before its first, replace swaps the content
(the heading line is kept). Field: one frontmatter line changes; the value is
read as typed after 'key:' (but a ' #' never starts a comment: such text is
kept whole, quoted); replace sets it, append/prepend add to a list (an absent
key becomes a list). Block: the list item or paragraph ending in ^ID
(an ^ID alone on a line: the block before it); append/prepend add the next
or previous item or paragraph; replace keeps ^ID on the new text.

Appending lines that already end the section (or an item already in the
list) changes nothing. Line endings (CRLF/LF) and every byte outside the
target are kept; the previous text goes to the note's history (`echo-memory
history PATH`). --dry-run prints the diff and writes nothing. Exit 44 when
the note, heading or block is absent (the message lists the note's real
headings or block ids); exit 2 for bad input (the message names the field),
nothing written."""),
)
