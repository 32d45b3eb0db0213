"""``outside-route`` on a vault a person already had (SPEC §5.2 "path outside any
route"): a note of their own without a kind, in their own folders or at the top, is no
finding (only counted once in the message); a note declaring a kind (``type:``) outside
every route is one, and its fix names that kind's folder from the routing manifest.
``lint --fix --apply`` never moves nor edits a person's notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.ops.lint.run import lint
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.lint_kit import write

#: A person's Obsidian vault before init: plain notes at the top and in their folders.
OWN_NOTES = {
    "Hello.md": "Hello there.\n",
    "World.md": "# World\n\nSee [[Hello]].\n",
    "Projects/Plan.md": "# Plan\n\n- [ ] first step\n",
    "Daily/2026-03-01.md": "Went for a walk.\n",
    "Books/Dune.md": "---\ntype: book\nrating: 5\n---\n# Dune\n",  # their own type
}
READING = "resources/reading.md"  # a typed note outside its kind's folder


def _obsidian_vault(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path)
    for path, text in OWN_NOTES.items():
        write(box, path, text)
    return box.init()


def _own_state(box: VaultBox) -> dict[str, tuple[bytes, int]]:
    return {path: ((box.vault / path).read_bytes(), (box.vault / path).stat().st_mtime_ns)
            for path in OWN_NOTES}


def test_own_notes_without_a_kind_are_no_findings(tmp_path: Path) -> None:
    env = lint(_obsidian_vault(tmp_path).ctx())
    assert [(f.check, f.path) for f in env.data.findings] == []
    assert env.ok


def test_own_notes_are_summed_up_once_in_the_message(tmp_path: Path) -> None:
    env = lint(_obsidian_vault(tmp_path).ctx())
    assert env.data.own_notes == len(OWN_NOTES)
    assert env.message.count("outside echo-memory's folders") == 1
    assert (f"{len(OWN_NOTES)} notes are outside echo-memory's folders; that is fine for "
            "your own notes") in env.message


def test_a_note_declaring_a_kind_outside_its_folder_is_told_that_kinds_folder(
        tmp_path: Path) -> None:
    box = _obsidian_vault(tmp_path)
    write(box, READING, "---\ntype: reference\n---\n# Reading list\n")
    env = lint(box.ctx())
    [finding] = [f for f in env.data.findings if f.path == READING]
    assert finding.check == "outside-route"
    assert "type: reference" in finding.problem
    assert "resources/references/" in finding.fix and "concepts" not in finding.fix
    assert not env.ok and env.data.own_notes == len(OWN_NOTES)


def test_an_area_outside_its_folder_is_told_the_domain_folders(tmp_path: Path) -> None:
    box = _obsidian_vault(tmp_path)
    write(box, "Health.md", "---\ntype: area\n---\n# Health\n")
    [finding] = [f for f in lint(box.ctx()).data.findings if f.path == "Health.md"]
    assert finding.check == "outside-route"
    assert "areas/<domain>/" in finding.fix and "personal" in finding.fix


def test_a_retired_note_declaring_a_kind_is_told_that_kinds_folder(tmp_path: Path) -> None:
    box = _obsidian_vault(tmp_path)
    write(box, "resources/tools/hammer.md", "---\ntype: concept\n---\n# Hammer\n")
    [finding] = [f for f in lint(box.ctx()).data.findings if f.path.startswith("resources/")]
    assert finding.check == "retired-path"
    assert "resources/concepts/" in finding.fix


def test_fix_apply_never_moves_nor_edits_own_or_typed_stray_notes(tmp_path: Path) -> None:
    box = _obsidian_vault(tmp_path)
    write(box, READING, "---\ntype: reference\n---\n# Reading list\n")
    before, reading = _own_state(box), box.read(READING)
    env = lint(box.ctx(), fix=True, apply=True)
    assert _own_state(box) == before and box.read(READING) == reading
    assert not {r.path for r in env.data.repairs} & {*OWN_NOTES, READING}
    assert [(f.check, f.path) for f in env.data.findings] == [("outside-route", READING)]


def test_cli_lint_on_an_obsidian_vault_exits_0_with_one_summary_line(
        tmp_path: Path, isolated_env: dict[str, str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = _obsidian_vault(tmp_path)
    done = run_main(["lint", "--vault", str(box.vault), "--state-dir", str(box.state)],
                    capsys, monkeypatch)
    assert done.code == 0, done
    assert "outside-route" not in done.out and "move it" not in done.out
    assert done.out.count("outside echo-memory's folders") == 1
