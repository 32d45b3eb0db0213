"""``history`` and ``restore`` follow a moved note (SPEC §5.6, §2.7).

A note keeps its file name when sweep's decay moves a project or a person moves the file
(the index then catches up): ``history`` of its new path lists the versions kept at the
old one, ``history`` of the old path lists them too and names the new one, and a restore
never makes a second note of the name (at the old path it is refused, naming the new)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.history import PATHS_LOG
from echo_core.ops.evolve import evolve_note
from echo_core.ops.history import note_history, restore_note
from echo_core.ops.index_sync import sync_paths
from echo_core.ops.notes_io import put_note
from echo_core.ops.sweep import full_sweep
from tests.capture_kit import VaultBox
from tests.conftest import run_cli

OLD = "projects/active/alpha-project.md"
NEW = "projects/on-hold/alpha-project.md"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    """Alpha Project captured on 2026-01-02, overwritten on 2026-01-05 ("v2")."""
    box = VaultBox(tmp_path).init()
    assert box.capture("Alpha Project", kind="project", today="2026-01-02",
                       body="Alpha body v1.").data.path == OLD
    assert put_note(box.ctx(ECHO_TODAY="2026-01-05", ECHO_NOW="2026-01-05T09:00:00"), OLD,
                    box.read(OLD).replace("v1", "v2")).data.changed
    return box


def _hand_move(box: VaultBox, old: str, new: str) -> None:
    """Move the file as a person would, then let the index catch up."""
    (box.vault / new).parent.mkdir(parents=True, exist_ok=True)
    (box.vault / old).rename(box.vault / new)
    sync_paths(box.ctx(), [old, new])


def _notes_named(box: VaultBox, name: str) -> list[str]:
    return sorted(p.relative_to(box.vault).as_posix() for p in box.vault.rglob(name)
                  if not p.relative_to(box.vault).as_posix().startswith("_agent/"))


def _texts(box: VaultBox, path: str) -> list[str]:
    ctx = box.ctx()
    return [ctx.history.text(path, v) for v in note_history(ctx, path).data.versions]


def test_history_of_a_project_sweep_moved_lists_its_versions_from_before_the_move(
        box: VaultBox) -> None:
    moved = full_sweep(box.ctx(ECHO_TODAY="2026-03-01", ECHO_NOW="2026-03-01T08:00:00"),
                       apply=True, decay=True, projects=("alpha-project",))
    assert moved.ok and (box.vault / NEW).exists() and not (box.vault / OLD).exists()
    env = note_history(box.ctx(), NEW)
    assert env.ok and env.data.exists and env.data.moved_to is None
    assert [v.path for v in env.data.versions] == [OLD, OLD]
    texts = _texts(box, NEW)
    assert "Alpha body v2." in texts[0] and "status: active" in texts[0]  # as it left OLD
    assert "Alpha body v1." in texts[1]


def test_restore_at_the_old_path_of_a_moved_project_makes_no_second_note(
        box: VaultBox) -> None:
    assert full_sweep(box.ctx(ECHO_TODAY="2026-03-01"), apply=True, decay=True,
                      projects=("alpha-project",)).ok
    first = note_history(box.ctx(), OLD).data.versions[-1]  # the v1 text, kept at OLD
    before = box.tree_digest()
    for confirm in (False, True):
        with pytest.raises(EchoError) as refused:
            restore_note(box.ctx(), OLD, first.version_id, confirm=confirm)
        assert refused.value.code == ExitCode.NOT_FOUND
        assert NEW in refused.value.message and "Nothing was written" in refused.value.message
    assert box.tree_digest() == before
    done = restore_note(box.ctx(ECHO_TODAY="2026-03-02"), NEW, first.version_id, confirm=True)
    assert done.ok and done.data.restored
    assert "Alpha body v1." in box.read(NEW)
    assert _notes_named(box, "alpha-project.md") == [NEW]  # one note of the name, ever
    assert box.entity("alpha-project").path == NEW


def test_history_follows_a_hand_moved_note_both_ways(box: VaultBox) -> None:
    _hand_move(box, OLD, NEW)
    new = note_history(box.ctx(), NEW)
    assert [v.path for v in new.data.versions] == [OLD] and new.data.exists
    assert OLD in new.message
    old = note_history(box.ctx(), OLD)
    assert old.ok and not old.data.exists and old.data.moved_to == NEW
    assert old.data.versions == new.data.versions and NEW in old.message
    with pytest.raises(EchoError) as refused:
        restore_note(box.ctx(), OLD, "previous", confirm=True)
    assert refused.value.code == ExitCode.NOT_FOUND and NEW in refused.value.message
    assert not (box.vault / OLD).exists()
    assert restore_note(box.ctx(), NEW, "previous", confirm=True).data.restored
    assert "Alpha body v1." in box.read(NEW) and _notes_named(box, "alpha-project.md") == [NEW]


def test_a_note_moved_twice_and_evolved_lists_every_version_once(box: VaultBox) -> None:
    third = "projects/archived/alpha-project.md"
    _hand_move(box, OLD, NEW)
    put_note(box.ctx(ECHO_NOW="2026-02-01T09:00:00"), NEW, box.read(NEW).replace("v2", "v3"))
    _hand_move(box, NEW, third)
    evolve_note(box.ctx(ECHO_TODAY="2026-03-01", ECHO_NOW="2026-03-01T09:00:00"), third,
                "rewritten", box.read(third).replace("v3", "v4"))
    env = note_history(box.ctx(), third)
    assert [v.path for v in env.data.versions] == [third, NEW, OLD]
    assert ["v3" in t for t in _texts(box, third)] == [True, False, False]
    assert len({v.sha for v in env.data.versions}) == len(env.data.versions)
    first = env.data.versions[-1]
    assert restore_note(box.ctx(ECHO_TODAY="2026-03-02"), third, first.version_id,
                        confirm=True).data.restored
    assert "Alpha body v1." in box.read(third)
    assert _notes_named(box, "alpha-project.md") == [third]


def test_the_same_text_kept_at_two_paths_is_listed_once(box: VaultBox) -> None:
    v1 = note_history(box.ctx(), OLD).data.versions[0]  # kept at OLD
    _hand_move(box, OLD, NEW)
    put_note(box.ctx(ECHO_NOW="2026-02-01T09:00:00"), NEW, box.read(NEW).replace("v2", "v1"))
    put_note(box.ctx(ECHO_NOW="2026-02-02T09:00:00"), NEW, box.read(NEW).replace("v1", "v3"))
    versions = note_history(box.ctx(), NEW).data.versions  # v1 kept at NEW too, then v2
    assert [(v.sha == v1.sha, v.path) for v in versions] == [(True, NEW), (False, NEW)]


def test_rings_kept_before_the_path_list_existed_are_found(box: VaultBox) -> None:
    root = box.ctx().history.files.root  # type: ignore[attr-defined]  # a folder vault
    (root / PATHS_LOG).unlink()  # as an older echo-memory left its rings
    _hand_move(box, OLD, NEW)
    assert [v.path for v in note_history(box.ctx(), NEW).data.versions] == [OLD]


def test_two_notes_of_one_name_are_not_merged_and_neither_is_doubled(box: VaultBox) -> None:
    business, personal = "notes/business/overview.md", "notes/personal/overview.md"
    gone = "notes/learning/overview.md"  # not entities: two notes of one name may be
    for path in (business, personal, gone):
        put_note(box.ctx(), path, f"# Overview\n\n{path} first\n")
        put_note(box.ctx(), path, f"# Overview\n\n{path} second\n")
    box.ctx().vault.delete_note(gone)
    for path in (business, personal):
        assert {v.path for v in note_history(box.ctx(), path).data.versions} == {path}
    with pytest.raises(EchoError) as refused:
        restore_note(box.ctx(), gone, "previous", confirm=True)
    assert refused.value.code == ExitCode.NOT_FOUND and business in refused.value.message
    assert not (box.vault / gone).exists()


def test_a_deleted_note_with_no_namesake_is_restored_at_its_path(box: VaultBox) -> None:
    box.ctx().vault.delete_note(OLD)
    assert restore_note(box.ctx(), OLD, "previous", confirm=True).data.restored
    assert "Alpha body v2." in box.read(OLD)


def test_cli_history_marks_versions_kept_at_the_old_path(box: VaultBox,
                                                         tmp_path: Path) -> None:
    _hand_move(box, OLD, NEW)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    env = box.env()
    listed = run_cli(["history", NEW, *base], env=env)
    assert listed.returncode == 0, listed.stderr
    assert f"(kept at {OLD})" in listed.stdout
    assert f"echo-memory restore {NEW} <version>" in listed.stdout
    data = json.loads(run_cli(["history", OLD, "--json", *base], env=env).stdout)
    assert data["moved_to"] == NEW and data["versions"][0]["path"] == OLD
    refused = run_cli(["restore", OLD, data["versions"][0]["version_id"], "--yes", *base],
                      env=env)
    assert refused.returncode == 44 and f"echo-memory restore {NEW}" in refused.stderr
    assert not (box.vault / OLD).exists()
