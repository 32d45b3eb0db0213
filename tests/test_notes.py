"""Note model helpers: sections, headings, appends, truncation and wikilinks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from echo_core.errors import EchoError, ExitCode
from echo_core.models import Note
from echo_core.notes import (
    append_under_heading,
    ensure_heading,
    find_section,
    get_section,
    headings,
    line_ending,
    parse_note,
    truncate,
    wikilinks,
)

NOTE = (
    "---\n"
    "# a yaml comment, not a heading\n"
    "title: Deploy\n"
    "---\n"
    "# Deploy\n"
    "\n"
    "Intro.\n"
    "\n"
    "## Notes\n"
    "- 2026-01-01: first\n"
    "\n"
    "```bash\n"
    "## not a heading\n"
    "```\n"
    "### Detail\n"
    "deep text\n"
    "\n"
    "## Related\n"
    "- [[Other]]\n"
)


def test_parse_note_fills_frontmatter_body_and_error() -> None:
    note = parse_note("projects/deploy.md", NOTE)
    assert note.frontmatter == {"title": "Deploy"}
    assert note.body.startswith("# Deploy\n")
    assert note.frontmatter_error is None
    assert note.text == NOTE and note.title == "Deploy"
    broken = parse_note("x.md", "---\na: [\n---\n# X\n")
    assert broken.frontmatter == {} and broken.body == "# X\n"
    assert broken.frontmatter_error is not None


def test_line_ending_prefers_crlf_only_when_dominant() -> None:
    assert line_ending("a\r\nb\r\n") == "\r\n"
    assert line_ending("a\nb\n") == "\n"
    assert line_ending("") == "\n"


def test_headings_skip_frontmatter_and_code_fences() -> None:
    assert headings(NOTE) == ["# Deploy", "## Notes", "### Detail", "## Related"]


def test_headings_normalise_closing_hashes_and_ignore_tags() -> None:
    text = "#tag line\n##  Spaced  ##\n~~~\n# fenced\n~~~\n   ### Indented\n####### seven\n"
    assert headings(text) == ["## Spaced", "### Indented"]


def test_find_section_runs_to_next_heading_of_same_or_higher_level() -> None:
    span = find_section(NOTE, "Notes")
    assert span is not None
    assert NOTE[span[0] : span[1]].startswith("## Notes\n")
    assert NOTE[span[1] :].startswith("## Related\n")
    assert "### Detail" in NOTE[span[0] : span[1]]


def test_find_section_matches_level_and_title_case_insensitively() -> None:
    assert find_section(NOTE, "## notes") == find_section(NOTE, "NOTES")
    assert find_section(NOTE, "### Notes") is None
    assert find_section(NOTE, "Missing") is None
    assert get_section(NOTE, "Related") == "## Related\n- [[Other]]\n"
    assert get_section(NOTE, "not a heading") is None
    with pytest.raises(EchoError) as info:
        find_section(NOTE, "  ")
    assert info.value.code == ExitCode.USAGE


def test_get_section_of_top_heading_covers_whole_body() -> None:
    section = get_section(NOTE, "# Deploy")
    assert section is not None and section.endswith("- [[Other]]\n")


def test_ensure_heading_appends_missing_heading_once() -> None:
    out = ensure_heading(NOTE, "Agent Log")
    assert out == NOTE + "\n## Agent Log\n"
    assert ensure_heading(out, "Agent Log") == out
    assert ensure_heading(NOTE, "related") == NOTE


def test_ensure_heading_keeps_crlf_and_handles_missing_newline() -> None:
    assert ensure_heading("# T\r\nbody", "Related") == "# T\r\nbody\r\n\r\n## Related\r\n"
    assert ensure_heading("", "# Top") == "# Top\n"
    assert ensure_heading("text\n\n", "Log", level=3) == "text\n\n### Log\n"
    with pytest.raises(EchoError):
        ensure_heading("x", "Log", level=7)


def test_append_under_heading_inserts_after_last_line_of_section_content() -> None:
    text = "# T\n\n## Notes\n- a\n\n## Related\n- [[X]]\n"
    out, changed = append_under_heading(text, "Notes", ["- b"])
    assert changed
    assert out == "# T\n\n## Notes\n- a\n- b\n\n## Related\n- [[X]]\n"


def test_append_under_heading_goes_before_subsections() -> None:
    out, _ = append_under_heading(NOTE, "## Notes", ["- 2026-03-01: second"])
    assert "```\n- 2026-03-01: second\n### Detail\n" in out
    assert out.replace("- 2026-03-01: second\n", "", 1) == NOTE


def test_append_under_heading_writes_dated_block_and_is_idempotent() -> None:
    lines = ["- 2026-03-01: shipped v2", "  rollout took an hour", "  no incidents"]
    out, changed = append_under_heading(NOTE, "Related", lines)
    assert changed
    assert out.endswith(
        "- [[Other]]\n- 2026-03-01: shipped v2\n  rollout took an hour\n  no incidents\n"
    )
    again, changed_again = append_under_heading(out, "Related", lines)
    assert (again, changed_again) == (out, False)


def test_append_under_heading_creates_missing_heading() -> None:
    out, changed = append_under_heading(
        "# T\n\nbody\n", "Agent Log", ["- 2026-03-01 09:30 did a thing"]
    )
    assert changed
    assert out == "# T\n\nbody\n\n## Agent Log\n- 2026-03-01 09:30 did a thing\n"


def test_append_under_heading_keeps_crlf_and_missing_trailing_newline() -> None:
    text = "# T\r\n\r\n## Related\r\n- [[A]]"
    out, changed = append_under_heading(text, "Related", ["- [[B]]\n  multi"])
    assert changed
    assert out == "# T\r\n\r\n## Related\r\n- [[A]]\r\n- [[B]]\r\n  multi"


def test_append_under_heading_with_no_lines_changes_nothing() -> None:
    assert append_under_heading(NOTE, "Notes", []) == (NOTE, False)


def test_append_under_heading_ignores_match_in_other_sections() -> None:
    text = "## A\n- same\n## B\n"
    out, changed = append_under_heading(text, "B", ["- same"])
    assert changed and out == "## A\n- same\n## B\n- same\n"


def test_truncate_reports_cut_and_prefers_line_boundary() -> None:
    assert truncate("short", 10) == ("short", False)
    assert truncate("line one\nline two", 12) == ("line one\n", True)
    assert truncate("abcdefghij", 4) == ("abcd", True)
    assert truncate("a\nbcdefghij", 8) == ("a\nbcdefg", True)
    assert truncate("x", 0) == ("", True)
    with pytest.raises(EchoError):
        truncate("x", -1)


def test_wikilinks_returns_targets_in_order_without_duplicates() -> None:
    text = (
        "See [[Alpha]], [[beta|Beta note]] and [[Alpha#Heading]].\n"
        "Embed ![[diagram.png]], self [[#Local]], table [[Gamma\\|g]].\n"
        "`[[inline code]]`\n"
        "```\n[[in fence]]\n```\n"
        "[[Delta^block]] [[ spaced ]]\n"
    )
    assert wikilinks(text) == ["Alpha", "beta", "diagram.png", "Gamma", "Delta^block", "spaced"]


def test_wikilinks_include_frontmatter_links() -> None:
    assert wikilinks('---\nrelated: "[[Alpha]]"\n---\n[[Beta]]\n') == ["Alpha", "Beta"]


def _title_by_lines(note: Note) -> str:
    """The title as ``str.splitlines`` defines its lines (the reference for ``title``)."""
    for line in note.body.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return note.path.rsplit("/", 1)[-1].removesuffix(".md")


@given(st.lists(st.sampled_from(["#", " ", "a", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85",
                                "\u2028", "\u2029", "x#", "# T", "\r\n"])).map("".join))
def test_title_is_the_first_line_starting_with_a_hash_and_space(body: str) -> None:
    note = Note(path="notes/stem.md", text=body, body=body)
    assert note.title == _title_by_lines(note)
