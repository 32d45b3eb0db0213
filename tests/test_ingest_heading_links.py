"""Source headings and wikilinks in what ``ingest`` writes: a heading copied into a part's
title and the document's parts list is cleaned as the title is (no ``[``, ``]`` or ``|``
left to break the link); a source section named like a section the note owns (``Notes``,
``Related``, ``Parts``, any level or case) is renamed "... (in the source)", so
``patch --heading Notes`` writes into the note's own section; the source's own
``[[wikilinks]]`` (notes of another vault) are escaped. Lint finds no broken link."""

from __future__ import annotations

import re
from pathlib import Path

from echo_core.notes import find_section, headings, wikilinks
from echo_core.ops.ingest import ingest
from echo_core.ops.ingest_chunks import Chunk
from echo_core.ops.ingest_notes import demote_headings, part_title
from echo_core.ops.lint.run import lint
from echo_core.ops.patch import patch_note
from tests.capture_kit import VaultBox
from tests.ingest_kit import REFS, ingest_box  # noqa: F401 - fixture box

HEADINGS = ["[[link]] #tag ^block", "Foo ]] bar | baz", "Notes", "related", "Parts"]
_ALIAS = re.compile(r"^\d+\. \[\[([^\[\]|]+)\|(.*)\]\]$")


def _section(heading: str) -> str:
    return (f"## {heading}\n\n" + "Each step is checked by a second person. " * 16
            + "\n\nSee [[Other Vault Note]] and `[[shown as code]]`.\n\n")


def _ingested(box: VaultBox, tmp_path: Path) -> tuple[str, list[str]]:
    src = tmp_path / "heads.md"
    lead = "The lead says what the steps are for. " * 20  # a part of its own
    src.write_text(f"# Heads\n\n{lead}\n\n" + "".join(_section(h) for h in HEADINGS),
                   encoding="utf-8")
    env = ingest(box.ctx(), str(src))
    assert env.ok, env
    return env.data.path, [p.path for p in env.data.parts]


def test_headings_in_the_parts_list_leave_every_link_whole(box: VaultBox,
                                                           tmp_path: Path) -> None:
    doc, parts = _ingested(box, tmp_path)
    assert len(parts) == len(HEADINGS) + 1
    listed = [line for line in box.read(doc).splitlines() if _ALIAS.match(line)]
    assert len(listed) == len(parts), box.read(doc)
    aliases = [_ALIAS.match(line).group(2) for line in listed]  # type: ignore[union-attr]
    assert not any(c in a for a in aliases for c in "[]|"), aliases
    assert aliases[1] == "Heads — part 2 (((link)) #tag ^block)"
    assert aliases[2] == "Heads — part 3 (Foo )) bar - baz)"
    assert wikilinks(box.read(doc)) == [Path(p).stem for p in parts]
    for path in parts[1:]:  # each part links its document only: source links escaped
        text = box.read(path)
        assert wikilinks(text) == ["heads"], text
        assert "\\[\\[Other Vault Note]]" in text and "`[[shown as code]]`" in text
    broken = [f for f in lint(box.ctx(), score=False).data.findings
              if f.check == "broken-wikilink"]
    assert broken == [], broken


def test_a_source_section_named_like_the_notes_own_is_renamed(box: VaultBox,
                                                             tmp_path: Path) -> None:
    _, parts = _ingested(box, tmp_path)
    for path in parts:
        owned = [h for h in headings(box.read(path))
                 if h.split(" ", 1)[1].casefold() in ("notes", "related", "parts")]
        assert owned == ["## Notes", "## Related"], (path, headings(box.read(path)))
    notes_part = parts[3]
    assert "## Notes (in the source)" in box.read(notes_part)
    assert "## related (in the source)" in box.read(parts[4])
    assert "## Parts (in the source)" in box.read(parts[5])
    env = patch_note(box.ctx(), notes_part, "append", "heading", "Notes", "- my line")
    assert env.ok, env
    text = box.read(notes_part)
    span = find_section(text, "Notes")
    assert span is not None and "- my line" in text[span[0]:span[1]]
    assert text.index("- my line") > text.index("\n## Notes\n")  # the note's own section


def test_quoting_renames_at_any_level_and_leaves_code_alone() -> None:
    text = ("# Notes\n   ### RELATED ##\n#### parts\n## Notes and more\n"
            "```\n## Notes\n[[in a fence]]\n```\n[[a]] `[[b]]` [[[c]]]")
    assert demote_headings(text) == (
        "## Notes (in the source)\n   ### RELATED (in the source)\n"
        "#### parts (in the source)\n## Notes and more\n"
        "```\n## Notes\n[[in a fence]]\n```\n\\[\\[a]] `[[b]]` \\[\\[\\[c]]]")
    assert part_title("T", 2, Chunk("x", "a [[b|c]] d")) == "T — part 2 (a ((b-c)) d)"
