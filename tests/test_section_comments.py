"""A heading inside a comment — HTML ``<!-- ... -->`` or Obsidian ``%% ... %%``, across
lines or on one — is not a heading: ``patch --heading``, ``get --section`` and the
section helpers skip it, as they skip headings in code fences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.notes import append_under_heading, find_section, get_section, headings
from echo_core.ops.patch import patched_text
from tests.cli_inproc import vault_runner

OBSIDIAN = "%%\n## Log\nold\n%%\n\n## Log\nreal\n"
HTML = "# T\n<!--\n## Log\nold\n-->\n\n## Log\nreal\n"


@pytest.mark.parametrize("text", [OBSIDIAN, HTML], ids=["obsidian", "html"])
def test_patch_appends_under_the_real_heading_not_the_commented_one(text: str) -> None:
    after = patched_text("n.md", text, "append", "heading", "Log", "- b")
    assert after == text + "- b\n"


@pytest.mark.parametrize("text", [OBSIDIAN, HTML], ids=["obsidian", "html"])
def test_get_section_and_headings_skip_a_commented_heading(text: str) -> None:
    assert get_section(text, "Log") == "## Log\nreal\n"
    assert headings(text).count("## Log") == 1


@pytest.mark.parametrize("comment", [
    "<!-- a comment -->", "%% a comment %%", "text <!-- a --> and %% b %% more",
    "use `%%` or `<!--` in a note", "``%% `x` %%``",
])
def test_a_comment_closed_on_its_line_hides_no_later_heading(comment: str) -> None:
    text = f"# T\n{comment}\n## Log\nreal\n"
    assert find_section(text, "Log") == (len(f"# T\n{comment}\n"), len(text))


@pytest.mark.parametrize(("opener", "closer"), [("<!--", "-->"), ("%%", "%%")],
                         ids=["html", "obsidian"])
def test_a_comment_opened_mid_line_hides_the_headings_up_to_its_close(
        opener: str, closer: str) -> None:
    text = f"# T\ntext {opener} starts\n## Log\nhidden\n{closer} done\n## Log\nreal\n"
    assert get_section(text, "Log") == "## Log\nreal\n"


def test_a_commented_heading_inside_a_section_does_not_end_it() -> None:
    text = "## Log\n- a\n%%\n## Draft\n%%\n- b\n## Next\nx\n"
    assert get_section(text, "Log") == "## Log\n- a\n%%\n## Draft\n%%\n- b\n"
    out, changed = append_under_heading(text, "Log", ["- c"])
    assert changed and out == text.replace("- b\n", "- b\n- c\n")
    assert patched_text("n.md", text, "append", "heading", "Log", "- c") == out


def test_a_fence_line_inside_a_comment_opens_no_code() -> None:
    text = "<!--\n```\n-->\n## Log\nreal\n"
    assert get_section(text, "Log") == "## Log\nreal\n"


def test_a_missing_heading_lists_only_real_headings(
        isolated_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    (run.vault / "n.md").write_text("# T\n%%\n## Hidden\n%%\n## Shown\n", encoding="utf-8")
    done = run("patch", "n.md", "--json", "--op", "append", "--heading", "Hidden", "--", "- b")
    assert done.code == 44
    message = json.loads(done.out)["error"]["message"]
    assert "'## Shown'" in message and "'## Hidden'" not in message


def test_cli_patch_and_get_target_the_real_heading(
        isolated_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    (run.vault / "n.md").write_text(OBSIDIAN, encoding="utf-8")
    assert run("patch", "n.md", "--op", "append", "--heading", "Log", "--", "- b").code == 0
    assert (run.vault / "n.md").read_text(encoding="utf-8") == OBSIDIAN + "- b\n"
    got = run("get", "n.md", "--section", "Log", "--json")
    assert json.loads(got.out)["content"] == "## Log\nreal\n- b\n"
