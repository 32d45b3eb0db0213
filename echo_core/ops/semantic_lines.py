"""One line per semantic memory note for the brief's Fact / Pattern (SPEC §4.1).

Semantic memory (``_agent/memory/semantic/``) holds what the agent learned about the
operator and the work: every capture of kind ``semantic`` and every session-end
reflection of kind ``semantic`` lands there. ``load`` reads those notes and the digest
lists each as ``- Title: first line ([[link]])``.
"""

from __future__ import annotations

from echo_core.frontmatter import split_frontmatter
from echo_core.notes import parse_note, section_body
from echo_core.ops.links import link_target

NO_FACTS = ("(none yet; a capture or a session-end reflect proposal of kind semantic, "
            'e.g. `echo-memory capture "Operator prefers pytest" --kind semantic`, is '
            "listed here)")
SUMMARY_CHARS = 160
_INACTIVE = ("superseded", "archived")


def semantic_line(path: str, text: str) -> tuple[str, str] | None:
    """``(updated, "- Title: first line ([[link]])")`` of the semantic memory note at
    ``path``; None for a superseded or archived one. The first line is the note's own
    text under its title, else its latest update (``## Observations``), cut at
    ``SUMMARY_CHARS``."""
    note = parse_note(path, text)
    fm = note.frontmatter
    if str(fm.get("status") or "").lower() in _INACTIVE or fm.get("superseded_by"):
        return None
    lines = split_frontmatter(text)[1].splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("# ")), -1)
    title = (lines[start][2:].strip() if start >= 0 else "") or link_target(path)
    intro = ""
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break  # the first section: the note's own text ends here
        if line.strip():
            intro = line.strip()
            break
    summary = intro
    if not summary:  # no text of its own: its latest update
        updates = [line for line in (section_body(text, "Observations") or "").splitlines()
                   if line.startswith(("- ", "* ", "+ "))]
        summary = updates[-1][2:].strip() if updates else ""
    if len(summary) > SUMMARY_CHARS:
        summary = summary[: SUMMARY_CHARS - 1].rstrip() + "…"
    line = f"- {title}" + (f": {summary}" if summary and summary != title else "")
    return str(fm.get("updated") or ""), f"{line} ([[{link_target(path)}]])"
