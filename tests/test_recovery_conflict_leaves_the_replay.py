"""A capture queued because the vault went away mid-write, whose interrupted write meets
a person's edit on recovery, is replayed by ``flush``, once: recovery marked its
operation done although it left the edited file as it was, so the replay was skipped as
"landed" and its line was lost (found on PostgreSQL with three machines)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.models import CaptureRequest
from echo_core.ops import write_intent
from echo_core.ops.capture import capture
from echo_core.ops.outbox import flush
from echo_core.ops.write_intent import recover_pending
from echo_core.protocols import BackendUnavailable
from plugins.storage_fs.folder_storage import FolderStorage
from tests.capture_kit import VaultBox

HAND_LINE = "- a line a person typed while the vault was away"
NOTE = "resources/people/ada-lovelace.md"


def test_a_queued_capture_whose_recovery_met_an_edit_is_replayed_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    box.capture("Ada Lovelace", kind="person", body="Wrote the first program.")
    real = FolderStorage.write_unless_changed

    def down_at_note(self: FolderStorage, path: str, text: str, expected: str | None) -> bool:
        if path == NOTE:
            raise BackendUnavailable("503 (test)")
        return real(self, path, text, expected)

    with monkeypatch.context() as patched:
        patched.setattr(FolderStorage, "write_unless_changed", down_at_note)
        queued = capture(box.ctx(), CaptureRequest(title="Ada Lovelace", kind="person",
                                                   body="Worked with Babbage."))
    assert queued.action == "queued"
    [intent] = (box.ctx().state_dir / write_intent.INTENT_DIR).glob("*.json")
    [daily_path] = [w["path"] for w in json.loads(intent.read_text(encoding="utf-8"))["writes"]
                    if w["path"].startswith("journal/daily/")]
    note = box.vault / NOTE  # another machine (or a person) writes the note meanwhile
    note.write_text(note.read_text(encoding="utf-8") + f"{HAND_LINE}\n", encoding="utf-8")
    with box.ctx().vault.storage.lock():
        assert recover_pending(box.ctx()).conflicts == (NOTE,)
    done = flush(box.ctx()).data
    assert (done.synced, done.pending, done.needs_attention) == (1, 0, 0)
    text = note.read_text(encoding="utf-8")
    assert HAND_LINE in text and text.count("Worked with Babbage.") == 1, text
    daily = box.read(daily_path)
    assert daily.count("updated person [[ada-lovelace]]") == 1, daily
    again = flush(box.ctx()).data
    assert (again.synced, again.pending) == (0, 0)
