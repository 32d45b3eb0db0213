"""``reflect claude-memory``, declared once: Claude Code's CLAUDE.md and auto-memory
files as reflect proposals (issue 17 item 6; the reading in
``echo_core.ops.claude_memory``). CLI only: it reads files of the machine it runs on."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import Access, CliParam, CliSurface, Operation, lazy_type, param
from echo_core.verbs.reflect_verbs import render_reflect


@attrs.frozen(kw_only=True)
class ClaudeMemoryParams:
    """What ``reflect claude-memory`` takes."""

    project: str = param("", help="The project folder (default: the current folder).",
                         cli=CliParam(positional=True, metavar="[PROJECT]"))
    claude_home: str = param("", help="Claude Code's folder (default: $CLAUDE_CONFIG_DIR, "
                             "else ~/.claude).", cli=CliParam(metavar="DIR"))
    apply: bool = param(False, help="false previews (default); true writes.", cli=CliParam(
        help="Capture the proposals (default: a preview that writes nothing)."))


def run_claude_memory(ctx: Any, p: ClaudeMemoryParams) -> Envelope[Any]:
    """The proposals of every memory file found, through ``ops.reflect.reflect``."""
    import os
    from pathlib import Path

    from echo_core.ops.claude_memory import claude_home, find_memory_files, memory_proposals
    from echo_core.ops.reflect import reflect

    project = Path(os.path.abspath(os.path.expanduser(p.project or os.getcwd())))
    home = Path(os.path.expanduser(p.claude_home)) if p.claude_home else claude_home(ctx.env)
    files = find_memory_files(project, home)
    proposals, origins = memory_proposals(files, ctx.env.get("HOME", ""))
    source = ", ".join(str(f.path) for f in files) or f"no memory files for {project}"
    return reflect(ctx, proposals, apply=p.apply, origins=origins, source=source)


def claude_memory_access(p: ClaudeMemoryParams) -> Access:
    """A write only when applying."""
    return "write" if p.apply else "read"


def render_claude_memory(env: Envelope[Any]) -> str:
    """The files read, then each proposal as ``reflect`` shows it."""
    data = env.data
    return f"Read: {data.source}\n{render_reflect(env)}"


CLAUDE_MEMORY = Operation(
    "reflect-claude-memory",
    "Import Claude Code's CLAUDE.md and auto-memory notes as proposals (dry run).",
    ("Turn the bullets of Claude Code's memory files (CLAUDE.md, auto-memory MEMORY.md "
     "and topic files) into reflect proposals; those files are never changed."),
    ClaudeMemoryParams, run_claude_memory, lazy_type("echo_core.ops.reflect", "ReflectResult"),
    access=claude_memory_access, render=render_claude_memory, mcp=None,
    cli=CliSurface(command=("reflect", "claude-memory"), help="""Import Claude Code's CLAUDE.md and auto-memory notes as proposals (dry run).

\b
Example:
  echo-memory reflect claude-memory                 preview, this project
  echo-memory reflect claude-memory ~/code/app --apply

\b
Files read (never changed; HOME = $CLAUDE_CONFIG_DIR, else ~/.claude):
  HOME/CLAUDE.md                     your memory for every project
  PROJECT/CLAUDE.md, PROJECT/.claude/CLAUDE.md, PROJECT/CLAUDE.local.md
  HOME/projects/KEY/memory/MEMORY.md and its topic files (*.md)
KEY is the project's path (its git root's first) with every character but
letters and digits replaced by "-", as Claude Code names it.

\b
Each bullet becomes a proposal of kind semantic: its text the body, its
headings the tags (plus claude-memory). Confidence by wording: "always",
"never", "must", "don't", "prefer", "use X not Y" high (0.9); "maybe",
"consider", "TODO", a question low (0.4: the inbox); else medium (0.7).
Code blocks, comments, @imports and index links to topic files are
skipped; the same bullet in several files is one proposal.

The preview classifies each as `reflect` does; --apply captures them, and
running it again changes nothing."""),
    fresh="quick",
)
