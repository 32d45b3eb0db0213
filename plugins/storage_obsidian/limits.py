"""How much of an answer the Obsidian backend reads, and how much of it a message quotes:
a hostile or misdirected server can neither fill the memory nor flood a terminal or a log."""

from __future__ import annotations

from echo_core import terminal_safe

#: The most bytes of a note's answer: the project's note size limit
#: (``echo_core.text_source.MAX_SOURCE_BYTES``, what a note may hold through the CLI, an
#: ingest or an import; mirrored here because plugins see only echo_core's public names).
NOTE_CAP = 10_000_000
#: The most bytes of any other API answer (a listing; a note's JSON form, which carries
#: the note's content escaped and its frontmatter parsed again).
ANSWER_CAP = 3 * NOTE_CAP
#: An error answer is read up to this many bytes: only an excerpt of it is ever shown.
ERROR_READ_CAP = 64 * 1024
#: The most characters of what a server said that a message quotes.
EXCERPT_CHARS = 200


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` as a message may quote it: its first ``limit`` characters on one line,
    control characters escaped (``terminal_safe``), and how long it was when cut."""
    shown = terminal_safe(text[:limit], one_line=True)
    if len(text) > limit:
        shown += f"... ({len(text):,} characters in all)"
    return shown
