"""``link`` never writes a ``[[wikilink]]`` that cannot resolve: a file name holding
``#``, ``^``, ``[`` or ``]`` (Obsidian reads them as heading, block, link end; our own
``notes.wikilinks`` cuts at ``#``) is refused with exit 2 and nothing written; auto-links
of capture skip such a note instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from echo_core.ops.links import link_mentioned
from tests.cli_inproc import vault_runner

CONCEPT = "---\ntype: concept\n---\n# Odd\n"


@pytest.mark.parametrize(("name", "marks"), [
    ("C# notes", "'#'"), ("array [1]", "'[' ']'"), ("x^y", "'^'"),
])
def test_link_refuses_a_file_name_no_wikilink_can_carry(
        name: str, marks: str, isolated_env: dict[str, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    assert run("capture", "Ada Lovelace", "-k", "person", "-b", "Mathematician.").code == 0
    ada = run.vault / "resources/people/ada-lovelace.md"
    odd = run.vault / f"resources/concepts/{name}.md"
    odd.write_text(CONCEPT, encoding="utf-8")
    before = ada.read_bytes()
    done = run("link", "Ada Lovelace", f"resources/concepts/{name}.md")
    assert done.code == 2, done
    assert f"holds {marks}" in done.err and "rename the file" in done.err
    assert "Nothing was written" in done.err
    assert ada.read_bytes() == before
    assert odd.read_text(encoding="utf-8") == CONCEPT
    # either order: the odd note as the first argument is refused too
    assert run("link", f"resources/concepts/{name}.md", "Ada Lovelace").code == 2
    assert ada.read_bytes() == before


def test_link_still_links_names_with_other_punctuation(
        isolated_env: dict[str, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    assert run("capture", "Ada Lovelace", "-k", "person").code == 0
    (run.vault / "resources/concepts/C++ (notes), v2.md").write_text(CONCEPT, encoding="utf-8")
    assert run("link", "Ada Lovelace", "resources/concepts/C++ (notes), v2.md").code == 0
    text = (run.vault / "resources/people/ada-lovelace.md").read_text(encoding="utf-8")
    assert "- [[C++ (notes), v2]]" in text


class _Untouchable:
    """A vault that fails the test when read or written."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"vault.{name} used")


def test_auto_links_skip_a_note_no_wikilink_can_name() -> None:
    from echo_core.ops.links import unlinkable

    assert unlinkable("a/C# notes.md") == "#" and unlinkable("a/ok-name.md") == ""
    text = "# Ada\n\nWorks on C sharp.\n"
    assert link_mentioned(_Untouchable(), "a/ada.md", text,
                          "resources/concepts/C# notes.md") == (text, False)
