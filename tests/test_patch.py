"""``patch`` (SPEC §6.2 patch_note): append / prepend / replace under a heading, a
frontmatter field or a block reference; an unknown heading lists the real ones; every byte
outside the target kept; idempotent appends; dry runs write nothing; the CLI surface."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.patch import patch_note, patched_text
from echo_core.ops.patch_targets import block_ids
from tests.capture_kit import VaultBox
from tests.cli_inproc import vault_runner

NOTE = """---
type: project
status: active
tags: [project]
updated: 2026-02-01
---
# Echo

Intro paragraph.

## Log

- 2026-01-05: started

### 2026

- 2026-02-01: planned

```
## Not a heading (code)
```

## Related
- [[ada-lovelace]]
"""
BLOCKS = """# Decisions

We chose Postgres
for the shared memory. ^db-choice

- keep notes small ^small
- second item

^orphan-mark

```
- in code ^code-id
```
"""


def _patch(text: str, operation: str, target_type: str, target: str, content: str) -> str:
    return patched_text("n.md", text, operation, target_type, target, content)  # type: ignore[arg-type]


def _error(text: str, *args: str) -> EchoError:
    with pytest.raises(EchoError) as caught:
        _patch(text, *args)  # type: ignore[arg-type]
    return caught.value


def _kept_around(before: str, after: str, inserted: str, at: int) -> None:
    """``after`` is ``before`` with ``inserted`` at offset ``at``, nothing else changed."""
    assert after == before[:at] + inserted + before[at:]


# --- headings ---------------------------------------------------------------------------

def test_append_under_a_heading_goes_after_the_last_line_of_its_whole_section() -> None:
    after = _patch(NOTE, "append", "heading", "Log", "- 2026-03-01: shipped")
    at = NOTE.index("```\n\n## Related") + len("```\n")
    _kept_around(NOTE, after, "- 2026-03-01: shipped\n", at)


def test_prepend_under_a_heading_goes_before_its_first_line() -> None:
    after = _patch(NOTE, "prepend", "heading", "## Log", "- 2026-03-01: first")
    _kept_around(NOTE, after, "- 2026-03-01: first\n", NOTE.index("- 2026-01-05"))


def test_replace_under_a_heading_swaps_the_section_and_keeps_the_rest() -> None:
    after = _patch(NOTE, "replace", "heading", "Log", "- only this")
    start = NOTE.index("## Log\n") + len("## Log\n")
    end = NOTE.index("## Related")
    assert after == NOTE[:start] + "\n- only this\n\n" + NOTE[end:]


def test_a_nested_heading_path_targets_the_heading_inside_the_first() -> None:
    after = _patch(NOTE, "append", "heading", "Log::2026", "- 2026-02-10: reviewed")
    at = NOTE.index("```\n\n## Related") + len("```\n")
    _kept_around(NOTE, after, "- 2026-02-10: reviewed\n", at)
    note = NOTE.replace("### 2026\n", "### 2026\n\n- x\n\n### 2027\n", 1)
    after = _patch(note, "prepend", "heading", "Log::2026", "- y")
    _kept_around(note, after, "- y\n", note.index("- x"))


def test_an_unknown_heading_is_not_found_and_lists_the_real_headings() -> None:
    error = _error(NOTE, "append", "heading", "Changelog", "- x")
    assert error.code == ExitCode.NOT_FOUND
    assert "'# Echo', '## Log', '### 2026', '## Related'" in error.message
    assert "Changelog" in error.message and "Not a heading" not in error.message


@pytest.mark.parametrize("target", ["Related::2026", "Log::Missing", "Not a heading (code)",
                                    "### Log"])
def test_a_heading_path_that_does_not_exist_is_not_found(target: str) -> None:
    assert _error(NOTE, "append", "heading", target, "- x").code == ExitCode.NOT_FOUND


def test_appending_lines_that_already_end_the_section_changes_nothing() -> None:
    once = _patch(NOTE, "append", "heading", "Log", "- a\n- b")
    assert once != NOTE
    assert _patch(once, "append", "heading", "Log", "- a\n- b") == once
    first = _patch(NOTE, "prepend", "heading", "Log", "- z")
    assert _patch(first, "prepend", "heading", "Log", "- z") == first
    replaced = _patch(NOTE, "replace", "heading", "Log", "- r")
    assert _patch(replaced, "replace", "heading", "Log", "- r") == replaced


def test_crlf_notes_stay_crlf_and_keep_every_other_byte() -> None:
    crlf = NOTE.replace("\n", "\r\n")
    after = _patch(crlf, "append", "heading", "Log::2026", "- c")
    at = crlf.index("```\r\n\r\n## Related") + len("```\r\n")
    _kept_around(crlf, after, "- c\r\n", at)


def test_an_empty_section_and_a_heading_at_the_end_without_a_line_break() -> None:
    text = "# T\n\n## Log\n\n## Related\n"
    assert _patch(text, "append", "heading", "Log", "- a") == "# T\n\n## Log\n- a\n\n## Related\n"
    bare = "# T\n\n## Log"
    assert _patch(bare, "append", "heading", "Log", "- a") == "# T\n\n## Log\n- a"


def test_content_that_leaves_a_code_fence_open_is_refused() -> None:
    error = _error(NOTE, "append", "heading", "Log", "```python\nx = 1")
    assert error.code == ExitCode.USAGE and error.message.startswith("content:")


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_content_is_refused_naming_content(content: str) -> None:
    error = _error(NOTE, "append", "heading", "Log", content)
    assert error.code == ExitCode.USAGE and error.message.startswith("content:")


def test_content_that_would_close_an_unclosed_frontmatter_block_is_refused() -> None:
    text = "---\ntype: x\n# T\n\n## Log\n- a\n"
    error = _error(text, "append", "heading", "Log", "---")
    assert error.code == ExitCode.USAGE and "frontmatter" in error.message


@pytest.mark.parametrize(("args", "field"), [
    (("delete", "heading", "Log", "x"), "operation"),
    (("append", "section", "Log", "x"), "target_type"),
    (("append", "heading", "  ", "x"), "target"),
    (("append", "heading", "Log::", "x"), "target"),
])
def test_bad_arguments_are_usage_errors_naming_the_field(args: tuple[str, ...],
                                                         field: str) -> None:
    error = _error(NOTE, *args)
    assert error.code == ExitCode.USAGE and error.message.startswith(f"{field}:")


# --- frontmatter fields ------------------------------------------------------------------

def _changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    pairs = zip(before.splitlines(), after.splitlines(), strict=True)
    return [(a, b) for a, b in pairs if a != b]


def test_replacing_a_field_changes_its_one_line() -> None:
    after = _patch(NOTE, "replace", "field", "status", "on-hold")
    assert _changed_lines(NOTE, after) == [("status: active", "status: on-hold")]
    dated = _patch(NOTE, "replace", "field", "updated", "2026-03-01")
    assert _changed_lines(NOTE, dated) == [("updated: 2026-02-01", "updated: 2026-03-01")]


def test_appending_to_a_list_field_adds_the_item_once() -> None:
    after = _patch(NOTE, "append", "field", "tags", "ai")
    assert _changed_lines(NOTE, after) == [("tags: [project]", "tags: [project, ai]")]
    assert _patch(after, "append", "field", "tags", "ai") == after
    first = _patch(NOTE, "prepend", "field", "tags", "memory")
    assert _changed_lines(NOTE, first) == [("tags: [project]", "tags: [memory, project]")]


def test_appending_to_an_absent_field_makes_a_one_item_list() -> None:
    after = _patch(NOTE, "append", "field", "aliases", "Echo Memory")
    assert after == NOTE.replace("updated: 2026-02-01\n",
                                 "updated: 2026-02-01\naliases: [Echo Memory]\n")


def test_appending_to_a_single_value_field_is_refused() -> None:
    error = _error(NOTE, "append", "field", "status", "x")
    assert error.code == ExitCode.USAGE and "replace" in error.message


def test_a_field_value_with_a_line_break_is_refused_naming_content() -> None:
    error = _error(NOTE, "replace", "field", "status", "a\nb")
    assert error.code == ExitCode.USAGE and error.message.startswith("content:")


# --- blocks ------------------------------------------------------------------------------

def test_the_block_ids_of_a_note_skip_code() -> None:
    assert block_ids(BLOCKS) == ["db-choice", "small", "orphan-mark"]


def test_a_list_item_block_gets_siblings_and_keeps_its_id_when_replaced() -> None:
    after = _patch(BLOCKS, "append", "block", "^small", "- new sibling")
    _kept_around(BLOCKS, after, "- new sibling\n", BLOCKS.index("- second item"))
    assert _patch(after, "append", "block", "small", "- new sibling") == after
    before = _patch(BLOCKS, "prepend", "block", "small", "- above")
    _kept_around(BLOCKS, before, "- above\n", BLOCKS.index("- keep notes"))
    replaced = _patch(BLOCKS, "replace", "block", "small", "- keep files small")
    assert replaced == BLOCKS.replace("- keep notes small ^small", "- keep files small ^small")


def test_a_paragraph_block_is_the_whole_paragraph_its_id_ends() -> None:
    replaced = _patch(BLOCKS, "replace", "block", "db-choice", "We chose SQLite.")
    assert replaced == BLOCKS.replace("We chose Postgres\nfor the shared memory. ^db-choice",
                                      "We chose SQLite. ^db-choice")
    after = _patch(BLOCKS, "append", "block", "db-choice", "Revisit in June.")
    _kept_around(BLOCKS, after, "\nRevisit in June.\n",
                 BLOCKS.index("^db-choice\n") + len("^db-choice\n"))
    assert _patch(after, "append", "block", "db-choice", "Revisit in June.") == after


def test_an_id_alone_on_its_line_names_the_whole_block_before_it() -> None:
    replaced = _patch(BLOCKS, "replace", "block", "orphan-mark", "- x\n- y")
    assert replaced == BLOCKS.replace("- keep notes small ^small\n- second item\n\n",
                                      "- x\n- y\n\n")
    appended = _patch(BLOCKS, "append", "block", "orphan-mark", "- third item")
    _kept_around(BLOCKS, appended, "- third item\n", BLOCKS.index("\n^orphan-mark"))
    assert _patch(appended, "append", "block", "orphan-mark", "- third item") == appended
    prepended = _patch(BLOCKS, "prepend", "block", "orphan-mark", "- zeroth")
    _kept_around(BLOCKS, prepended, "- zeroth\n", BLOCKS.index("- keep notes"))


def test_an_unknown_block_is_not_found_and_lists_the_ids() -> None:
    error = _error(BLOCKS, "append", "block", "code-id", "x")
    assert error.code == ExitCode.NOT_FOUND
    assert "^db-choice, ^small, ^orphan-mark" in error.message
    assert _error(BLOCKS, "append", "block", "not an id!", "x").code == ExitCode.USAGE


# --- the operation -----------------------------------------------------------------------

PATH = "projects/active/echo.md"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    (box.vault / PATH).parent.mkdir(parents=True, exist_ok=True)
    (box.vault / PATH).write_bytes(NOTE.encode())
    return box


def test_a_patch_writes_the_note_and_keeps_the_prior_text_in_history(box: VaultBox) -> None:
    env = patch_note(box.ctx(), PATH, "append", "heading", "Log", "- 2026-03-01: shipped")
    assert env.action == "updated" and env.data.changed and "+- 2026-03-01: shipped" in env.data.diff
    assert "- 2026-03-01: shipped" in box.read(PATH)
    ctx = box.ctx()
    [version] = ctx.history.versions(PATH)
    assert ctx.history.text(PATH, version) == NOTE
    again = patch_note(box.ctx(), PATH, "append", "heading", "Log", "- 2026-03-01: shipped")
    assert again.action == "unchanged" and not again.data.changed and again.data.diff == ""
    assert len(box.ctx().history.versions(PATH)) == 1


def test_a_dry_run_shows_the_diff_and_writes_nothing(box: VaultBox) -> None:
    before = box.tree_digest()
    env = patch_note(box.ctx(), PATH, "replace", "field", "status", "done", dry_run=True)
    assert env.action == "dry-run" and env.data.changed and env.data.dry_run
    assert "-status: active\n+status: done\n" in env.data.diff
    assert box.tree_digest() == before


@pytest.mark.parametrize(("path", "code"), [
    ("_agent/echo-vault.md", ExitCode.USAGE), (".obsidian/app.md", ExitCode.USAGE),
    ("../outside.md", ExitCode.USAGE), ("projects/active/nothing.md", ExitCode.NOT_FOUND),
])
def test_a_refused_or_absent_path_writes_nothing(box: VaultBox, path: str,
                                                 code: ExitCode) -> None:
    before = box.tree_digest()
    with pytest.raises(EchoError) as caught:
        patch_note(box.ctx(), path, "append", "heading", "Log", "- x")
    assert caught.value.code == code and box.tree_digest() == before


def test_an_entity_patched_with_an_alias_is_found_by_it(box: VaultBox) -> None:
    created = box.capture("Ada Lovelace", kind="person").data.path
    patch_note(box.ctx(), created, "append", "field", "aliases", "Countess of Lovelace")
    [entity] = box.ctx().entity_names.exact("Countess of Lovelace")
    assert entity.path == created


# --- the CLI -----------------------------------------------------------------------------

@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        isolated_env: dict[str, str]) -> Any:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    note = run.vault / PATH
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_bytes(NOTE.encode())
    return run


def _bytes(run: Any) -> bytes:
    data: bytes = (run.vault / PATH).read_bytes()
    return data


def test_cli_unknown_heading_exits_44_listing_the_real_headings(run: Any) -> None:
    done = run("patch", PATH, "--op", "append", "--heading", "Changelog", "- x")
    assert done.code == 44
    assert "'# Echo', '## Log', '### 2026', '## Related'" in done.err
    assert _bytes(run) == NOTE.encode()


def test_cli_appends_a_bullet_and_a_second_run_changes_nothing(run: Any) -> None:
    done = run("patch", PATH, "--op", "append", "--heading", "Log", "- 2026-03-01: done",
               "--json")
    data = json.loads(done.out)
    assert done.code == 0 and data["action"] == "updated" and data["changed"] is True
    once = _bytes(run)
    again = json.loads(run("patch", PATH, "--op", "append", "--heading", "Log",
                           "- 2026-03-01: done", "--json").out)
    assert again["action"] == "unchanged" and _bytes(run) == once


def test_cli_reads_content_from_stdin_and_from_a_file(run: Any, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.cli_inproc import run_main

    base = ["--vault", str(run.vault), "--state-dir", str(tmp_path / "state")]
    done = run_main(["patch", *base, PATH, "--op", "replace", "--heading", "Log::2026", "-"],
                    capsys, monkeypatch, stdin=b"- from stdin\n")
    assert done.code == 0 and "- from stdin" in _bytes(run).decode()
    source = tmp_path / "content.md"
    source.write_text("- from a file\n", encoding="utf-8")
    done = run("patch", PATH, "--op", "prepend", "--heading", "Log", "--file", str(source))
    assert done.code == 0 and "- from a file\n- 2026-01-05" in _bytes(run).decode()


def test_cli_dry_run_prints_the_diff_and_writes_nothing(run: Any) -> None:
    done = run("patch", PATH, "--op", "replace", "--field", "status", "on-hold", "--dry-run")
    assert done.code == 0 and "+status: on-hold" in done.out and "nothing written" in done.out
    assert _bytes(run) == NOTE.encode()


@pytest.mark.parametrize(("args", "named"), [
    (("--op", "append", "- x"), "target"),
    (("--op", "append", "--heading", "Log", "--field", "tags", "- x"), "target"),
    (("--op", "append", "--heading", "Log"), "content"),
    (("--op", "cut", "--heading", "Log", "- x"), "operation"),
    (("--heading", "Log", "- x"), "operation"),
    (("--op", "append", "--field", "status", "x"), "replace"),
])
def test_cli_bad_input_exits_2_naming_the_field_and_writes_nothing(
        run: Any, args: tuple[str, ...], named: str) -> None:
    done = run("patch", PATH, *args)
    assert done.code == 2 and named in done.err, done
    assert _bytes(run) == NOTE.encode()
