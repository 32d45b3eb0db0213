"""The PreCompact checkpoint while the vault is away: queued, never dropped or doubled.

A compaction while the vault folder is unmounted used to lose its checkpoint (the hook
looked the note up before capturing, and the lookup's VaultMissing ended the hook). Now
capture queues it like any write; a second compaction while still away queues an
extension of the note the first one creates, and a compaction after the vault is back
replays the outbox first, so the session and day still have one checkpoint note.
"""

from __future__ import annotations

from pathlib import Path

from tests.capture_kit import VaultBox
from tests.hook_kit import (  # noqa: F401 - fixtures box, project
    checkpoint_names,
    compact,
    flush_cli,
    hook_box,
    hook_project,
    seeded_vault,
)

SESSION = "a1b2c3d4-e5f6"
NOTE = "_agent/memory/working/2026-03-01-checkpoint-a1b2c3d4.md"


def _compact(box: VaultBox, project: Path, tmp_path: Path, trigger: str) -> None:
    compact(box, project, tmp_path, SESSION, trigger)


def test_checkpoints_made_while_the_vault_is_away_land_in_one_note(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    away = box.vault.with_name("vault-unmounted")
    box.vault.rename(away)
    _compact(box, project, tmp_path, "auto")
    _compact(box, project, tmp_path, "manual")
    assert not box.vault.exists()  # nothing made a stray folder where the vault belongs
    away.rename(box.vault)
    assert "2 synced" in flush_cli(box, project)
    assert checkpoint_names(box) == [Path(NOTE).name]
    text = box.read(NOTE)
    assert "Checkpoint before context compaction (auto)" in text
    assert "- 2026-03-01: Checkpoint before context compaction (manual)" in text
    assert "0 synced, 0 pending" in flush_cli(box, project)  # nothing replays twice
    assert checkpoint_names(box) == [Path(NOTE).name]


def test_a_compaction_after_the_vault_returns_lands_the_queued_checkpoint_first(
        box: VaultBox, project: Path, tmp_path: Path) -> None:
    away = box.vault.with_name("vault-unmounted")
    box.vault.rename(away)
    _compact(box, project, tmp_path, "auto")
    away.rename(box.vault)
    _compact(box, project, tmp_path, "manual")  # no flush in between
    assert checkpoint_names(box) == [Path(NOTE).name]
    text = box.read(NOTE)
    assert text.index("(auto)") < text.index("(manual)")
    assert "0 synced, 0 pending" in flush_cli(box, project)
    assert checkpoint_names(box) == [Path(NOTE).name]
