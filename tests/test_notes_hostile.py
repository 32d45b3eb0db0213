"""Section editors on awkward notes: open fences, heading lines, lone CRs, long lines."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.frontmatter import parse_frontmatter
from echo_core.notes import (
    append_under_heading,
    ensure_heading,
    find_section,
    headings,
    replace_section_body,
    section_body,
)

OPEN_FENCE = "# Ada\n\nIntro.\n\n```python\nprint('never closed')\n"


def test_append_after_an_unclosed_fence_closes_it_and_lands_under_a_real_heading() -> None:
    out, changed = append_under_heading(OPEN_FENCE, "## Log", ["- 2026-03-01: fact"])
    assert changed
    assert out == OPEN_FENCE + "```\n\n## Log\n- 2026-03-01: fact\n"
    assert headings(out) == ["# Ada", "## Log"]
    assert section_body(out, "## Log") == "- 2026-03-01: fact"


def test_every_later_update_of_a_note_with_an_unclosed_fence_succeeds() -> None:
    text = OPEN_FENCE
    for day in range(1, 6):
        text, changed = append_under_heading(text, "## Log", [f"- 2026-03-0{day}: fact {day}"])
        assert changed
        text, _ = append_under_heading(text, "## Related", [f"- [[Other {day}]]"])
    assert headings(text) == ["# Ada", "## Log", "## Related"]
    assert section_body(text, "Log") == "\n".join(f"- 2026-03-0{d}: fact {d}" for d in range(1, 6))
    assert text.count("```") == 2


def test_replace_section_body_after_an_unclosed_fence() -> None:
    out = replace_section_body(OPEN_FENCE, "## Scope", "the scope")
    assert section_body(out, "Scope") == "the scope"
    assert headings(out) == ["# Ada", "## Scope"]


def test_unclosed_fence_inside_a_section_is_closed_before_the_appended_lines() -> None:
    text = "# T\n\n## Log\n- a\n~~~~\ncode\n\n"
    out, _ = append_under_heading(text, "Log", ["- b"])
    assert out == "# T\n\n## Log\n- a\n~~~~\ncode\n~~~~\n- b\n\n"
    assert section_body(out, "Log").endswith("- b")


def test_appended_lines_that_open_a_fence_do_not_swallow_the_next_heading() -> None:
    text = "# T\n\n## Log\n- a\n\n## Related\n- [[X]]\n"
    out, _ = append_under_heading(text, "Log", ["- b", "```sh", "echo hi"])
    assert headings(out) == ["# T", "## Log", "## Related"]
    assert out == "# T\n\n## Log\n- a\n- b\n```sh\necho hi\n```\n\n## Related\n- [[X]]\n"


def test_replaced_body_that_opens_a_fence_does_not_swallow_the_next_heading() -> None:
    text = "# T\n\n## Scope\nold\n\n## Related\n- [[X]]\n"
    out = replace_section_body(text, "Scope", "```\nunclosed")
    assert headings(out) == ["# T", "## Scope", "## Related"]


@pytest.mark.parametrize("line", ["## Log", "## Other", "# Top", "### Deeper"])
def test_appending_a_heading_line_is_idempotent(line: str) -> None:
    text = "# T\n\n## Log\n- a\n\n## Related\n- [[X]]\n"
    once, changed = append_under_heading(text, "## Log", [line, "- under it"])
    assert changed
    assert append_under_heading(once, "## Log", [line, "- under it"]) == (once, False)


def test_lone_cr_after_the_closing_delimiter_keeps_the_frontmatter_on_append() -> None:
    text = "---\r\ntype: person\r\n---\r"
    assert parse_frontmatter(text)[0] == {"type": "person"}
    out, changed = append_under_heading(text, "## Log", ["- fact"])
    assert changed
    assert parse_frontmatter(out)[0] == {"type": "person"}
    assert out == "---\r\ntype: person\r\n---\r\n## Log\r\n- fact\r\n"
    for edit in (ensure_heading(text, "Log"), replace_section_body(text, "Log", "x")):
        assert parse_frontmatter(edit)[0] == {"type": "person"}


def test_lone_cr_ending_the_last_line_is_completed_not_doubled() -> None:
    out, _ = append_under_heading("# T\n\n## Log\n- a\r", "Log", ["- b"])
    assert out == "# T\n\n## Log\n- a\r\n- b"


def test_empty_line_appended_at_an_unterminated_end_is_idempotent() -> None:
    text = "# T\n\n## Log\n- a"
    once, changed = append_under_heading(text, "Log", [""])
    assert changed and once == "# T\n\n## Log\n- a\n\n"
    assert append_under_heading(once, "Log", [""]) == (once, False)


@pytest.mark.parametrize("heading", ["## a # #", "## C#", "Log ##", "## Log ##"])
def test_a_heading_with_hashes_is_found_after_it_is_added(heading: str) -> None:
    out = ensure_heading("# T\n", heading)
    assert find_section(out, heading) is not None
    assert ensure_heading(out, heading) == out
    appended, _ = append_under_heading("# T\n", heading, ["- x"])
    assert section_body(appended, heading) == "- x"


def test_a_line_that_would_close_an_unclosed_frontmatter_block_is_refused() -> None:
    text = "---\ntitle: x\n\n# T\n"
    with pytest.raises(EchoError) as caught:
        append_under_heading(text, "Log", ["---"])
    assert caught.value.code == ExitCode.USAGE and "never closes" in caught.value.message
    with pytest.raises(EchoError):
        replace_section_body(text, "Log", "a\n...\nb")
    assert append_under_heading("---\na: 1\n---\n# T\n", "Log", ["---"])[1]  # closed: fine


@pytest.mark.parametrize("line", [
    "# a" + " " * 20_000 + "b", "## a" + " \t" * 20_000 + "b #x", "# x" + " #" * 20_000,
])
def test_headings_with_long_runs_of_spaces_are_read_in_linear_time(line: str) -> None:
    text = f"# T\n\n{line}\n\n## Log\n- a\n"
    started = time.perf_counter()
    headings(text)
    append_under_heading(text, "Log", ["- b"])
    assert time.perf_counter() - started < 0.5


def test_editors_behave_the_same_under_python_dash_o() -> None:
    script = (
        "from echo_core.notes import append_under_heading as a, replace_section_body as r\n"
        f"t = {OPEN_FENCE!r}\n"
        "print(repr(a(t, 'Log', ['- x'])), repr(r(t, 'Scope', 'y')))\n"
    )
    outputs = [subprocess.run([sys.executable, *flags, "-c", script], capture_output=True,
                              text=True, check=True).stdout for flags in ([], ["-O"])]
    assert outputs[0] == outputs[1] and "```" in outputs[0]


def test_replace_section_body_twice_is_once_when_it_changes_the_majority_ending() -> None:
    # the old content is most of the file's CRLF lines: removing it makes LF the majority
    text = "# T\n## Log\na\r\nb\r\nc\r\n"
    once = replace_section_body(text, "Log", "new")
    assert once == "# T\n## Log\n\nnew\n"
    assert replace_section_body(once, "Log", "new") == once
