"""echo_note_stats: a third party's operation, ``note-stats``, declared once.

Registered through ``register_operations``, it appears as ``echo-memory note-stats``, as
the MCP tool ``echo_note_stats`` and as the Claude Code skill ``note-stats`` with no other
change anywhere. ``top`` shows a surface override: people may ask for up to 50 frequent
words, models (MCP) for at most 10, declared next to the parameter.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import attrs

import echo_core
from echo_core import Bounds, CliParam, Envelope, McpParam, Operation, SkillSpec, hookimpl, param

WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
WIKILINK = re.compile(r"\[\[([^\]\n]+)\]\]")
MD_LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\([^)\s]+\)")
IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\s]+\)")
FRONTMATTER = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n", re.DOTALL)


@attrs.frozen(kw_only=True)
class NoteStatsParams:
    """What ``note-stats`` takes."""

    path: str = param(help="Vault-relative note path, e.g. resources/people/ada-lovelace.md.",
                      min_length=1, max_length=500, cli=CliParam(positional=True))
    top: int = param(5, help="How many of the most frequent words to list (0 for none).",
                     ge=0, le=50, cli=CliParam(short="-t"),
                     mcp=McpParam(bounds=Bounds(le=10)))  # models get a shorter list


@attrs.frozen
class WordFrequency:
    """One frequent word and how often it occurs."""

    word: str
    count: int


@attrs.frozen
class NoteStatsResult:
    """The counts of one note's body (frontmatter left out)."""

    path: str
    words: int
    wikilinks: int
    links: int
    top_words: tuple[WordFrequency, ...] = ()


def visible_text(body: str) -> str:
    """``body`` as a reader sees it: link texts kept, targets and images left out."""
    shown = MD_LINK.sub(lambda m: m.group(1), IMAGE.sub(" ", body))
    return WIKILINK.sub(lambda m: m.group(1).split("|")[-1], shown)


def count_words(path: str, text: str, top: int) -> NoteStatsResult:
    """The counts of ``text`` (a note's whole text, frontmatter left out); words are
    case-folded for ``top`` (ties in order of first use)."""
    body = FRONTMATTER.sub("", text, count=1)
    words = [w.casefold() for w in WORD.findall(visible_text(body))]
    common = Counter(words).most_common(top) if top else []
    return NoteStatsResult(path, len(words), len(WIKILINK.findall(body)),
                           len(MD_LINK.findall(body)),
                           tuple(WordFrequency(w, n) for w, n in common))


def run_note_stats(ctx: Any, p: NoteStatsParams) -> Envelope[NoteStatsResult]:
    """Read the note through the core's ``get`` operation and count it."""
    note = echo_core.invoke(ctx, "get", {"path": p.path})
    result = count_words(note.data.path, note.data.content, p.top)
    return Envelope(True, "counted", f"{result.path}: {result.words} words, "
                    f"{result.wikilinks} wikilinks, {result.links} links", result)


def render_note_stats(env: Envelope[NoteStatsResult]) -> str:
    """The summary line, then one frequent word per line."""
    lines = [env.message]
    lines += [f"{item.count:6d}  {item.word}" for item in env.data.top_words]
    return "\n".join(lines)


NOTE_STATS_SKILL = SkillSpec("note-stats", (
    "Count the words and links of one echo-memory note and list its most frequent words. "
    "Use when the user asks how long a note is, whether it links to others, or what it is "
    "mostly about."), """
# Count a note's words and links

```bash
echo-memory note-stats $ARGUMENTS --json
```

Give the note's vault path (find it with `echo-memory recall`). The counts leave the
frontmatter out; `wikilinks` counts `[[...]]` links, `links` counts markdown links.
""", argument_hint="<note path>")

NOTE_STATS = Operation(
    "note-stats",
    "Count the words and links of the note at PATH and list its most frequent words.",
    ("Count the words, wikilinks and markdown links of one note (frontmatter left out) "
     "and list its most frequent words. Use it to see how long a note is or what it is "
     "mostly about. Returns the counts and the top words with how often each occurs."),
    NoteStatsParams, run_note_stats, NoteStatsResult, access="read",
    render=render_note_stats, skill=NOTE_STATS_SKILL,
)


@hookimpl
def register_operations(register: echo_core.Register[Operation[Any]]) -> None:
    """Register ``note-stats``."""
    register(NOTE_STATS.name, NOTE_STATS)
