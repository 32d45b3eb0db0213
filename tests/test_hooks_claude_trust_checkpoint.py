"""PreCompact findings of the trust review: a checkpoint made while another process holds
the vault lock is queued in the outbox (quickly, not after the lock's long wait) and
lands at the next flush or load, one note per session and day; and a run cut after the
note was written but before it was indexed never makes the next compaction write a
``-2`` note."""

from __future__ import annotations

from pathlib import Path

from tests.capture_kit import VaultBox
from tests.hook_kit import (  # noqa: F401 - fixtures box, project
    checkpoint_names,
    compact,
    context_of,
    flush_cli,
    hook_box,
    hook_env,
    hook_project,
    payload,
    plant_held_lock,
    run_hook,
    seeded_vault,
)

SESSION = "a1b2c3d4-e5f6"
NOTE = "_agent/memory/working/2026-03-01-checkpoint-a1b2c3d4.md"
#: Far below PreCompact's 24 s budget: the lock is waited for briefly, then queued.
QUICK = 9.0


def _compact(box: VaultBox, project: Path, tmp_path: Path, trigger: str) -> float:
    """Run PreCompact for ``SESSION``; the seconds it took."""
    return compact(box, project, tmp_path, SESSION, trigger)


# --- 2. the vault lock is held by another process -------------------------------------------


def test_a_checkpoint_made_while_the_vault_lock_is_held_is_queued_and_lands_at_flush(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    lock = plant_held_lock(box.vault)
    took = _compact(box, project, tmp_path, "auto")
    assert took < QUICK, f"PreCompact stalled {took:.1f}s on the held lock"
    assert checkpoint_names(box) == []  # nothing written under another process's lock
    lock.unlink()
    assert "1 synced" in flush_cli(box, project)
    assert checkpoint_names(box) == [Path(NOTE).name]
    assert "Checkpoint before context compaction (auto)" in box.read(NOTE)
    assert "- fix the deploy script" in box.read(NOTE)


def test_checkpoints_made_while_the_lock_stays_held_land_in_one_note(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    lock = plant_held_lock(box.vault)
    assert _compact(box, project, tmp_path, "auto") < QUICK
    assert _compact(box, project, tmp_path, "manual") < QUICK
    lock.unlink()
    assert "2 synced" in flush_cli(box, project)
    assert checkpoint_names(box) == [Path(NOTE).name]
    text = box.read(NOTE)
    assert "Checkpoint before context compaction (auto)" in text
    assert "- 2026-03-01: Checkpoint before context compaction (manual)" in text
    assert "0 synced, 0 pending" in flush_cli(box, project)


def test_a_compaction_after_the_lock_is_released_lands_the_queued_checkpoint_first(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    lock = plant_held_lock(box.vault)
    _compact(box, project, tmp_path, "auto")
    lock.unlink()
    _compact(box, project, tmp_path, "manual")  # no flush in between
    assert checkpoint_names(box) == [Path(NOTE).name]
    text = box.read(NOTE)
    assert text.index("(auto)") < text.index("(manual)")
    assert "0 synced, 0 pending" in flush_cli(box, project)


def test_the_session_start_after_a_compaction_lands_and_shows_the_queued_checkpoint(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    lock = plant_held_lock(box.vault)
    _compact(box, project, tmp_path, "auto")
    lock.unlink()
    proc = run_hook("SessionStart", payload("SessionStart", SESSION, None, project,
                                            source="compact"), hook_env(box), project)
    assert proc.returncode == 0, proc.stderr
    text = context_of(proc.stdout, "SessionStart")
    assert f"## Checkpoint before this compaction ({NOTE})" in text
    assert checkpoint_names(box) == [Path(NOTE).name]


# --- 3. a note written but not indexed (an interrupted PreCompact) --------------------------


def test_a_checkpoint_note_the_index_lost_is_extended_not_doubled(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    # the note exactly as a first compaction writes it, but in a vault whose index never
    # learned of it: a run cut between writing the note and indexing it
    scratch = seeded_vault(tmp_path / "scratch")
    _compact(scratch, project, tmp_path, "auto")
    written = scratch.read(NOTE)
    (box.vault / NOTE).write_text(written, encoding="utf-8")
    _compact(box, project, tmp_path, "manual")
    assert checkpoint_names(box) == [Path(NOTE).name]  # no 2026-03-01-checkpoint-a1b2c3d4-2.md
    text = box.read(NOTE)
    assert text.startswith(written.split("## Notes")[0].split("updated:")[0])
    assert "Checkpoint before context compaction (auto)" in text
    assert "- 2026-03-01: Checkpoint before context compaction (manual)" in text
    assert box.entity(Path(NOTE).stem).path == NOTE
