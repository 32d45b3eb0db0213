"""``fm`` and ``patch --field`` on a frontmatter block that is YAML but not a mapping
(a list, a lone text) refuse with exit 2, nothing written; on a key's one line they keep
a trailing comment, and a flow list grown at one end keeps its items as spelled."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.frontmatter import parse_frontmatter
from echo_core.ops.patch_targets import patch_field
from tests.cli_inproc import vault_runner

LIST_BLOCK = "---\n- just\n- a list\n---\n# List fm\n"
TEXT_BLOCK = "---\njust some text\n---\n# Text fm\n"


@pytest.mark.parametrize("note", [LIST_BLOCK, TEXT_BLOCK])
@pytest.mark.parametrize("args", [
    ("fm", "n.md", "status", '"x"'),
    ("patch", "n.md", "--op", "replace", "--field", "status", "x"),
    ("patch", "n.md", "--op", "append", "--field", "tags", "z"),
])
def test_a_block_that_is_not_a_mapping_is_refused(
        note: str, args: tuple[str, ...], isolated_env: dict[str, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    (run.vault / "n.md").write_text(note, encoding="utf-8")
    done = run(*args)
    assert done.code == 2, done
    assert "not a mapping" in done.err and "Nothing was written" in done.err
    assert (run.vault / "n.md").read_text(encoding="utf-8") == note


CRLF = ('\ufeff---\r\ntype: concept\r\nstatus: active # keep me\r\ntags: [a, "b"]\r\n'
        '---\r\n# N\r\n')


def _one_line_changed(before: str, after: str, old: str, new: str) -> None:
    assert after == before.replace(old, new, 1), after


def test_fm_keeps_a_comment_on_the_key_line(
        isolated_env: dict[str, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    note = run.vault / "n.md"
    note.write_bytes(CRLF.encode())
    assert run("fm", "n.md", "status", '"on-hold"').code == 0
    after = note.read_bytes().decode()
    _one_line_changed(CRLF, after, "status: active # keep me", "status: on-hold # keep me")
    assert parse_frontmatter(after)[0]["status"] == "on-hold"
    assert run("fm", "n.md", "status", '"on-hold"').code == 0  # again: unchanged
    assert note.read_bytes().decode() == after


def test_patch_field_keeps_the_spelling_of_a_flow_list_and_a_comment(
        isolated_env: dict[str, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    note = run.vault / "n.md"
    note.write_bytes(CRLF.encode())
    assert run("patch", "n.md", "--op", "append", "--field", "tags", "c").code == 0
    _one_line_changed(CRLF, note.read_bytes().decode(), 'tags: [a, "b"]', 'tags: [a, "b", c]')
    assert run("patch", "n.md", "--op", "replace", "--field", "status", "done").code == 0
    assert "status: done # keep me\r\n" in note.read_bytes().decode()


@pytest.mark.parametrize(("line", "operation", "content", "want"), [
    ('tags: [a, "b"]', "append", "c", 'tags: [a, "b", c]'),
    ('tags: [a, "b"]', "prepend", "c", 'tags: [c, a, "b"]'),
    ("tags: [ a ]  # mine", "append", "[b, c]", "tags: [ a, b, c ]  # mine"),
    ("tags: []", "append", "x y", "tags: [x y]"),
    ("tags: ['a']", "append", "a", "tags: ['a']"),  # already there: unchanged
    ("when: [2026-01-01]", "append", "2026-03-10", "when: [2026-01-01, 2026-03-10]"),
    ("n: 1 # count", "replace", "2", "n: 2 # count"),
    ('t: "a # b" # why', "replace", "c", "t: c # why"),
])
def test_only_the_edited_part_of_the_key_line_changes(line: str, operation: str,
                                                      content: str, want: str) -> None:
    text = f"---\ntype: concept\n{line}\nz: 1\n---\n# N\n"
    after = patch_field(text, line.split(":")[0], operation, content)  # type: ignore[arg-type]
    assert after == text.replace(line, want), after


def test_a_line_it_cannot_keep_falls_back_to_rewriting_the_value() -> None:
    from echo_core.ops.patch_targets import set_field

    # a value YAML spreads over lines, a key written twice: as set_frontmatter_key does
    text = "---\ntags: [a,\n  b]\nk: 1\nk: 2\n---\n"
    assert parse_frontmatter(set_field(text, "tags", ["a", "b", "c"]))[0]["tags"] == [
        "a", "b", "c"]
    assert parse_frontmatter(set_field(text, "k", 3))[0]["k"] == 3
