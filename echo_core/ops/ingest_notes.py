"""The notes ``ingest`` writes, as text: one document note and its part notes. Pure.

Layout (SPEC §1.1, kind ``reference``)::

    resources/references/<slug>.md                      the document
    resources/references/<slug>/<slug>-part-01.md       its parts, in order

The document's frontmatter: ``type: reference``, ``status: active``, ``created``,
``updated``, ``tags`` (``reference``, ``ingested``), ``source_url`` or ``source_path``,
``fetched_at``, ``content_hash`` (``sha256:`` of the stored markdown) and ``parts``; its
body: the summary lead (the first paragraph) and a link to each part. A part's
frontmatter adds ``part_of`` and ``part`` (a part is not an entity:
``note_entities.PART_KEYS``); its title is "<doc title> — part N
(<heading>)", its body starts with a link back to the document. Every note ends with
``## Notes`` and ``## Related``, the sections its template owns (``OWN_HEADINGS``).

The source's text is quoted (``demote_headings``): its ``# `` headings become ``## ``, a
heading named like a section the note owns gets " (in the source)" (so ``## Notes``
finds the note's own section, never the source's), and its ``[[`` are escaped (``\\[\\[``,
shown as written): a wikilink of the source names a note of another vault. A heading
copied into a title (``part_title``) and every ``[[link|alias]]`` built here have no
``[``, ``]`` or ``|`` (as the document title: ``ingest_extract.one_line``).

Every note also records ``ingest_hash``: the hash of its text as ingest wrote it, that
key and the link bullets of its ``## Related`` section (``- [[...]]``: links ingest and
other writes add) left out. Any other line under ``## Related`` (text a person types at
the end of the note lands there) is hashed, so it counts as an edit. A note whose
``ingest_hash`` no longer matches was edited by hand, and ingest leaves it alone.

The document note's ``ingest_hash`` is ``generated_hash``: only the part ingest
generates is hashed (its text up to ``## Notes``, ``updated`` left out: other writes
set it), so a person's text under ``## Notes`` or ``## Related`` is no edit of it
(``generated_intact``): ingest rewrites the rest and carries that text over
(``own_notes``, ``related_section``).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from typing import Any

from echo_core.frontmatter import remove_frontmatter_key, render_frontmatter
from echo_core.ops.ingest_chunks import Chunk, heading_of
from echo_core.ops.ingest_extract import link_safe, one_line
from echo_core.ops.links import RELATED_HEADING, link_target

FOLDER = "resources/references"
TAGS = ("reference", "ingested")
LEAD_MAX = 600
HASH_KEY = "ingest_hash"
NOTES_HEADING = "Notes"
#: The sections of the notes ingest writes (matched as ``patch`` / ``capture`` match a
#: heading: any level, any case); a source heading named so is renamed.
OWN_HEADINGS = ("Parts", NOTES_HEADING, RELATED_HEADING)
_OWN = frozenset(h.casefold() for h in OWN_HEADINGS)
_RELATED = f"\n## {RELATED_HEADING}\n"
_NOTES = f"\n## {NOTES_HEADING}\n"
#: Inline code (a ``[[`` there is shown as written already).
_INLINE_CODE = re.compile(r"`[^`\n]*`")
#: Two or more ``[`` in a row: what opens a wikilink.
_LINK_OPEN = re.compile(r"\[{2,}")
#: A heading line of a source: up to three spaces, ``#`` to ``######``, the title.
_SOURCE_HEADING = re.compile(r"^( {0,3})(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
#: A ``## Related`` line that is not a person's text: a link bullet, or blank.
_LINK_OR_BLANK = re.compile(r"^[ \t]*(?:-[ \t]+\[\[[^\]\n]+\]\][ \t]*)?$")


def doc_path(slug: str) -> str:
    """The document note of ``slug``."""
    return f"{FOLDER}/{slug}.md"


def part_path(slug: str, n: int) -> str:
    """Part ``n`` (1-based) of the document ``slug``."""
    return f"{FOLDER}/{slug}/{slug}-part-{n:02d}.md"


def part_folder(slug: str) -> str:
    """The folder holding the parts of ``slug``."""
    return f"{FOLDER}/{slug}"


def markdown_hash(text: str) -> str:
    """The ``content_hash`` of a document's stored markdown."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def written_hash(text: str) -> str:
    """The ``ingest_hash`` of a note's text (see the module docstring)."""
    bare = remove_frontmatter_key(text, HASH_KEY)
    cut = bare.find(_RELATED)
    kept = bare[:cut] if cut >= 0 else bare
    if cut >= 0:
        typed = [line for line in bare[cut + len(_RELATED):].split("\n")
                 if not _LINK_OR_BLANK.match(line)]
        if typed:  # none: the same hash as a note whose Related holds links only
            kept = kept.rstrip("\n") + _RELATED + "\n".join(typed)
    return hashlib.sha256(kept.rstrip("\n").encode("utf-8")).hexdigest()[:16]


def edited_by_hand(text: str, stored_hash: Any) -> bool:
    """Whether a note ingest wrote no longer holds what it wrote (no hash: edited)."""
    return not isinstance(stored_hash, str) or written_hash(text) != stored_hash


def _notes_span(text: str) -> tuple[int, int] | None:
    """Where the text under a note's (first) ``## Notes`` heading starts and ends (at its
    ``## Related`` heading, else the end); None when it has no such heading."""
    start = text.find(_NOTES)
    if start < 0:
        return None
    start += len(_NOTES)
    end = text.find(_RELATED, start - 1)
    return start, (len(text) if end < 0 else max(end, start))


def own_notes(text: str | None) -> str:
    """What a person wrote under a note's ``## Notes`` heading ('' when nothing), as it
    stands (the section is kept byte for byte when the note is written again)."""
    span = _notes_span(text) if text else None
    return text[span[0]:span[1]] if text and span else ""


def _generated(text: str) -> str:
    span = _notes_span(text)
    return text[:span[0]] if span else text


def generated_hash(text: str) -> str:
    """The ``ingest_hash`` of a document note: ``written_hash`` of its text up to its
    ``## Notes`` body, ``updated`` left out (module docstring)."""
    return written_hash(remove_frontmatter_key(_generated(text), "updated"))


def generated_intact(text: str, stored_hash: Any) -> bool:
    """Whether the part of a document note ingest generates holds what ingest wrote (a
    person's text under ``## Notes`` / ``## Related`` and a new ``updated`` allowed).
    A document written before ``generated_hash`` existed has the whole-note hash, which
    equals ``written_hash`` of that part when nothing was added under its sections."""
    if not isinstance(stored_hash, str):
        return False
    return stored_hash in (generated_hash(text), written_hash(_generated(text)))


def related_section(text: str | None) -> str:
    """The ``## Related`` section of an existing note (its heading on), or a bare one."""
    if text:
        cut = text.find(_RELATED)
        if cut >= 0:
            return text[cut + 1:].rstrip("\n") + "\n"
    return f"## {RELATED_HEADING}\n"


def _sealed(fm: dict[str, Any], body: str, related: str, notes: str | None = None) -> str:
    """The note: ``body`` (ending with its ``## Notes`` line), then ``notes`` (a
    person's text carried over), then ``related``. ``notes`` None: a part, hashed
    whole (``written_hash``); else the document (``generated_hash``)."""
    draft = f"{render_frontmatter(fm)}{body.rstrip()}\n\n{related}"
    sealed = written_hash(draft) if notes is None else generated_hash(draft)
    fm = {**fm, HASH_KEY: sealed}
    return f"{render_frontmatter(fm)}{body.rstrip()}\n{notes or ''}\n{related}"


def _escaped_links(line: str) -> str:
    """``line`` with each ``[`` of a ``[[`` run outside inline code escaped (``\\[``)."""
    if "[[" not in line:
        return line
    out: list[str] = []
    last = 0
    for code in _INLINE_CODE.finditer(line):
        out += [_LINK_OPEN.sub(_escaped, line[last:code.start()]), code.group(0)]
        last = code.end()
    out.append(_LINK_OPEN.sub(_escaped, line[last:]))
    return "".join(out)


def _escaped(run: re.Match[str]) -> str:
    return "\\[" * len(run.group(0))


def _quoted_heading(line: str) -> str:
    """A heading line of the source as the note holds it (module docstring); any other
    line as it is."""
    found = _SOURCE_HEADING.match(line)
    if found is None:
        return line
    indent, marks, title = found.groups()
    if title.casefold() in _OWN:
        return f"{indent}{marks if len(marks) > 1 else '##'} {title} (in the source)"
    return f"{indent}#{line[len(indent):]}" if len(marks) == 1 else line


def demote_headings(text: str) -> str:
    """``text`` quoted as the module docstring says, outside code fences: level-1
    headings made level 2 (the note's own title is the only ``# `` line), a heading
    named like a section the note owns (``OWN_HEADINGS``) renamed, ``[[`` escaped."""
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            line = _escaped_links(_quoted_heading(line))
        out.append(line)
    return "\n".join(out)


def lead_paragraph(text: str) -> str:
    """The first paragraph that is not a heading, cut to ``LEAD_MAX`` characters."""
    for block in text.split("\n\n"):
        block = block.strip()
        if block and heading_of(block.split("\n", 1)[0]) is None:
            if len(block) > LEAD_MAX:
                block = block[:LEAD_MAX].rsplit(" ", 1)[0] + " …"
            return block
    return ""


def part_title(title: str, n: int, chunk: Chunk) -> str:
    """"<title> — part N (<heading>)", the heading left out when it is the title; the
    heading on one line, with no ``[``, ``]`` or ``|`` (``ingest_extract.one_line``)."""
    heading = one_line(chunk.heading)
    suffix = f" ({heading})" if heading and heading.casefold() != title.casefold() else ""
    return f"{title} — part {n}{suffix}"


def _source_keys(location: str, is_url: bool) -> dict[str, Any]:
    return {"source_url": location} if is_url else {"source_path": location}


def _stamp(created: str | None, today: _dt.date) -> tuple[Any, Any]:
    try:
        made = _dt.date.fromisoformat(created) if created else today
    except ValueError:
        made = today
    return made, today


def document_text(title: str, location: str, is_url: bool, markdown: str, slug: str,
                  part_titles: list[str], fetched_at: str, today: _dt.date, *,
                  created: str | None = None, related: str | None = None,
                  notes: str = "") -> str:
    """The document note (module docstring); ``created``, ``related`` and ``notes``
    (``own_notes``) carried over from the note it replaces."""
    made, updated = _stamp(created, today)
    fm: dict[str, Any] = {"type": "reference", "status": "active", "created": made,
                          "updated": updated, "tags": list(TAGS),
                          **_source_keys(location, is_url), "fetched_at": fetched_at,
                          "content_hash": markdown_hash(markdown), "parts": len(part_titles)}
    lead = lead_paragraph(demote_headings(markdown))
    links = "\n".join(f"{n}. [[{link_target(part_path(slug, n))}|{link_safe(t)}]]"
                      for n, t in enumerate(part_titles, 1))
    body = (f"# {title}\n\n{lead}\n\nSource: {location}\n\n## Parts\n\n{links}\n\n"
            f"## {NOTES_HEADING}\n")
    return _sealed(fm, body, related or related_section(None), notes)


def chunk_text(doc_title: str, location: str, is_url: bool, slug: str, n: int, title: str,
               chunk: Chunk, today: _dt.date, *, created: str | None = None,
               related: str | None = None) -> str:
    """Part ``n`` (module docstring). Its frontmatter holds ``PART_KEYS``, so it is not
    an entity (``echo_core.note_entities``): the document note is."""
    made, updated = _stamp(created, today)
    doc_link = f"[[{link_target(doc_path(slug))}]]"
    fm: dict[str, Any] = {"type": "reference", "status": "active", "created": made,
                          "updated": updated, "tags": list(TAGS),
                          **_source_keys(location, is_url), "part_of": doc_link, "part": n}
    body = (f"# {title}\n\nPart {n} of {doc_link} ({doc_title}).\n\n"
            f"{demote_headings(chunk.text)}\n\n## {NOTES_HEADING}\n")
    return _sealed(fm, body, related or related_section(None))
