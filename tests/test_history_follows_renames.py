"""``history`` and ``restore`` follow a note renamed by hand (SPEC §5.6).

A person's ``mv ada.md ada-lovelace.md`` (or Obsidian's rename) changes the note's file
name, so following it by name cannot work: the next command's vault-change check sees
the old path gone and a new one holding the same text, records the rename in the note
history, and ``history`` of the new path lists the old path's versions."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from echo_core import history as history_module
from echo_core.errors import EchoError, ExitCode
from echo_core.history import RENAMES_LOG, NoteHistory
from echo_core.models import Envelope
from echo_core.operations.invoke import invoke
from echo_core.ops.notes_io import put_note
from tests.capture_kit import VaultBox
from tests.conftest import run_cli

OLD = "resources/people/ada.md"
NEW = "resources/people/ada-lovelace.md"
NOW = {"ECHO_TODAY": "2026-01-05", "ECHO_NOW": "2026-01-05T09:00:00"}


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    """Ada captured, then overwritten ("v2": the v1 text is kept at OLD), and a first
    command run since (the vault-change check has recorded the notes as they are)."""
    box = VaultBox(tmp_path).init()
    assert box.capture("Ada", kind="person", body="Ada body v1.").data.path == OLD
    assert put_note(box.ctx(**NOW), OLD, box.read(OLD).replace("v1", "v2")).ok
    assert history(box, OLD).data.exists
    return box


def history(box: VaultBox, path: str) -> Envelope[Any]:
    """``history`` as every surface runs it (its vault-change check first)."""
    return invoke(box.ctx(), "history", {"path": path})


def rename(box: VaultBox, old: str, new: str) -> None:
    """Rename the file as a person would (no index catches up)."""
    os.rename(box.vault / old, box.vault / new)


def renames(box: VaultBox) -> list[tuple[str, str]]:
    return box.ctx().history.renames()


def test_history_of_a_renamed_note_lists_the_versions_kept_at_its_old_name(
        box: VaultBox) -> None:
    rename(box, OLD, NEW)
    env = history(box, NEW)
    assert env.ok and env.data.exists and env.data.moved_to is None
    assert [v.path for v in env.data.versions] == [OLD]
    assert OLD in env.message
    assert renames(box) == [(OLD, NEW)]
    old = history(box, OLD)
    assert not old.data.exists and old.data.moved_to == NEW and "renamed" in old.message
    assert old.data.versions == env.data.versions
    first = env.data.versions[0].version_id
    with pytest.raises(EchoError) as refused:  # no second copy at the old path
        invoke(box.ctx(), "restore", {"path": OLD, "version_id": first, "confirm": True})
    assert refused.value.code == ExitCode.NOT_FOUND and NEW in refused.value.message
    assert not (box.vault / OLD).exists()
    done = invoke(box.ctx(), "restore", {"path": NEW, "version_id": first, "confirm": True})
    assert done.ok and done.data.restored and "Ada body v1." in box.read(NEW)


def test_history_follows_a_chain_of_two_renames(box: VaultBox) -> None:
    middle = "resources/people/ada-king.md"
    rename(box, OLD, middle)
    assert history(box, middle).data.versions
    put_note(box.ctx(ECHO_NOW="2026-02-01T09:00:00"), middle,
             box.read(middle).replace("v2", "v3"))
    assert history(box, middle).data.exists  # the check records the edit's text
    rename(box, middle, NEW)
    env = history(box, NEW)
    assert [v.path for v in env.data.versions] == [middle, OLD]
    assert renames(box) == [(OLD, middle), (middle, NEW)]
    assert history(box, OLD).data.moved_to == NEW
    oldest = env.data.versions[-1].version_id
    assert invoke(box.ctx(), "restore", {"path": NEW, "version_id": oldest,
                                         "confirm": True}).data.restored
    assert "Ada body v1." in box.read(NEW)


def test_a_rename_back_and_forth_is_followed_without_looping(box: VaultBox) -> None:
    rename(box, OLD, NEW)
    assert history(box, NEW).data.versions
    rename(box, NEW, OLD)
    env = history(box, OLD)
    assert renames(box) == [(OLD, NEW), (NEW, OLD)]
    assert env.data.exists and [v.path for v in env.data.versions] == [OLD]
    assert history(box, NEW).data.moved_to == OLD


def test_two_notes_of_one_text_renamed_together_record_nothing(box: VaultBox) -> None:
    twin = "resources/people/ada-twin.md"
    (box.vault / twin).write_text(box.read(OLD), encoding="utf-8")
    assert history(box, twin).data.exists  # recorded with the same text as OLD
    rename(box, OLD, NEW)
    rename(box, twin, "resources/people/ada-other.md")
    env = history(box, NEW)
    assert env.data.exists and env.data.versions == ()
    assert renames(box) == []


def test_a_rename_with_an_edit_records_nothing(box: VaultBox) -> None:
    rename(box, OLD, NEW)
    with open(box.vault / NEW, "a", encoding="utf-8") as note:
        note.write("Edited while renamed.\n")
    env = history(box, NEW)
    assert env.data.exists and env.data.versions == ()
    assert renames(box) == []


def test_history_in_the_cli_follows_a_rename_made_just_before(box: VaultBox) -> None:
    rename(box, OLD, NEW)
    env = {**box.env(), "ECHO_VAULT": str(box.vault), "ECHO_STATE_DIR": str(box.state)}
    done = run_cli(["history", NEW], env=env)
    assert done.returncode == 0, done.stderr
    assert f"(kept at {OLD})" in done.stdout


def test_the_rename_log_counts_a_pair_once_survives_a_torn_line_and_stays_bounded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_module, "RENAMES_KEPT", 5)
    kept = NoteHistory(tmp_path / "history")
    assert kept.record_rename("a.md", "b.md", at="2026-01-01T00:00:00")
    assert not kept.record_rename("a.md", "b.md", at="2026-01-02T00:00:00")
    with open(tmp_path / "history" / RENAMES_LOG, "a", encoding="utf-8") as log:
        log.write('{"from": "x.md", "to"')  # a write cut short
    assert kept.record_rename("b.md", "c.md", at="2026-01-03T00:00:00")
    assert kept.renames() == [("a.md", "b.md"), ("b.md", "c.md")]
    assert kept.renamed("c.md") == ["b.md", "a.md"]
    assert kept.renamed("a.md", forward=True) == ["b.md", "c.md"]
    for i in range(30):
        kept.record_rename(f"n{i}.md", f"n{i + 1}.md", at="2026-01-04T00:00:00")
    lines = (tmp_path / "history" / RENAMES_LOG).read_text(encoding="utf-8").splitlines()
    assert 5 <= len(lines) <= 10
    assert kept.renames()[-1] == ("n29.md", "n30.md")


def test_restore_right_after_a_rename_follows_it(box: VaultBox) -> None:
    rename(box, OLD, NEW)  # and no other command before the restore
    done = invoke(box.ctx(), "restore", {"path": NEW, "version_id": "previous",
                                         "confirm": True})
    assert done.ok and done.data.restored and "Ada body v1." in box.read(NEW)
    assert renames(box) == [(OLD, NEW)]
