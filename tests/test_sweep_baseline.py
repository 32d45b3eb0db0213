"""The full sweep records its baseline from the scan it read the notes after (no second
walk): the manifest then holds what a fresh scan of the tracked notes shows, the notes
it rewrote and the folders they are in included, and a later hand edit is still seen."""

from __future__ import annotations

import os
from pathlib import Path

from echo_core.ops.fast_sweep import fast_sweep
from echo_core.ops.sweep import full_sweep
from echo_core.ops.vault_changes import manifest_of, scan_corpus
from tests.capture_kit import VaultBox
from tests.test_sweep_hand_written import write_hand_vault


def _swept(root: Path) -> VaultBox:
    box = VaultBox(root).init()
    write_hand_vault(box.vault, count=40)
    (box.vault / "inbox").mkdir(exist_ok=True)
    (box.vault / "inbox/loose.md").write_text("# Loose\n", "utf-8")  # an untracked folder
    (box.vault / "resources/concepts/README.md").write_text("# Concepts\n", "utf-8")
    result = full_sweep(box.ctx(), apply=True).data
    assert result.frontmatter  # notes were rewritten after the scan
    return box


def test_the_baseline_is_what_a_fresh_scan_of_the_tracked_notes_shows(tmp_path: Path) -> None:
    box = _swept(tmp_path)
    ctx = box.ctx()
    fresh = scan_corpus(ctx.vault.storage)
    manifest = manifest_of(ctx)
    recorded = manifest.notes()
    assert {p: r[:2] for p, r in recorded.items()} == fresh.files
    assert all(r[2] for r in recorded.values())  # every note recorded with its hash
    # _agent/ also holds the vault lock file, released after the record: its stamp moves
    assert {f: m for f, m in manifest.folders().items() if f != "_agent"} == \
        {f: m for f, m in fresh.folders.items() if f != "_agent"}
    assert set(manifest.folders()) == set(fresh.folders)
    assert "inbox/loose.md" not in recorded and "inbox" not in manifest.folders()
    done = fast_sweep(box.ctx()).data
    assert (done.new, done.changed, done.gone, done.touched) == ((), (), (), 0)


def test_a_hand_edit_after_the_sweep_is_seen_by_the_next_fast_sweep(tmp_path: Path) -> None:
    box = _swept(tmp_path)
    note = min(p for p in box.vault.glob("resources/people/*.md") if p.name != "README.md")
    note.write_text(note.read_text("utf-8") + "\nEdited by hand.\n", "utf-8")
    os.utime(note, ns=(note.stat().st_atime_ns, note.stat().st_mtime_ns + 10**9))
    done = fast_sweep(box.ctx()).data
    assert done.changed == (note.relative_to(box.vault).as_posix(),)
