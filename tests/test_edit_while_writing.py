"""A person editing a note while an operation writes it (SPEC §1.3: the vault is the
person's too; an edit takes no lock): the edit is never overwritten. The folder storage
replaces a file only while it still holds what the caller read, checked after the new
text is on disk (``write_unless_changed``); a capture whose note was edited meanwhile
plans again from the new text and lands with the edit kept; one that meets an edit on
every attempt writes nothing and says so; a queued capture meeting one stays queued."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from echo_core.errors import EditedMeanwhile
from echo_core.models import CaptureRequest
from echo_core.ops import write_intent
from echo_core.ops.capture import EDIT_ATTEMPTS, capture
from plugins.storage_fs.folder_storage import FolderStorage
from tests.capture_kit import VaultBox
from tests.hand_edit_kit import saved_by_hand_at_first_fsync

HAND_LINE = "- added by hand while the capture ran"


def _temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.tmp") if p.is_file()]


def test_a_file_changed_before_the_rename_is_not_replaced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = FolderStorage(str(tmp_path))
    storage.write("notes/a.md", "v1\n")
    saved_by_hand_at_first_fsync(monkeypatch, lambda: (tmp_path / "notes/a.md").write_text(
        "v1\nby hand\n", encoding="utf-8"))
    assert storage.write_unless_changed("notes/a.md", "v2\n", "v1\n") is False
    assert storage.read("notes/a.md") == "v1\nby hand\n"
    assert not _temp_files(tmp_path)


def test_an_unchanged_or_still_absent_file_is_written(tmp_path: Path) -> None:
    storage = FolderStorage(str(tmp_path))
    assert storage.write_unless_changed("notes/new.md", "first\n", None) is True
    assert storage.write_unless_changed("notes/new.md", "second\n", "first\n") is True
    assert storage.read("notes/new.md") == "second\n"
    assert storage.write_unless_changed("notes/new.md", "third\n", None) is False  # exists
    assert storage.write_unless_changed("notes/gone.md", "x\n", "was here\n") is False
    assert not storage.exists("notes/gone.md")
    assert storage.read("notes/new.md") == "second\n" and not _temp_files(tmp_path)


def _edit_before_commit(box: VaultBox, path: str, monkeypatch: pytest.MonkeyPatch,
                        times: int) -> list[int]:
    """Append ``HAND_LINE`` (numbered) to ``path`` just as each of the first ``times``
    commits saves its intent: after the capture read the note, before it writes it."""
    real = write_intent._save_intent
    made: list[int] = []

    def save_then_edit(*args: Any) -> Path:
        found = real(*args)
        if len(made) < times:
            made.append(len(made))
            with open(box.vault / path, "a", encoding="utf-8") as note:
                note.write(f"{HAND_LINE} ({len(made)})\n")
        return found

    monkeypatch.setattr(write_intent, "_save_intent", save_then_edit)
    return made


def test_a_capture_whose_note_is_edited_meanwhile_lands_with_the_edit_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    path = box.capture("Ada Lovelace", kind="person", body="Wrote the first program.").data.path
    edits = _edit_before_commit(box, path, monkeypatch, times=1)
    found = capture(box.ctx(), CaptureRequest(title="Ada Lovelace", kind="person",
                                              body="Worked with Babbage."))
    assert found.ok and found.action == "updated" and edits == [0]
    text = box.read(path)
    assert f"{HAND_LINE} (1)" in text and "Worked with Babbage." in text
    assert text.count("Worked with Babbage.") == 1  # planned twice, written once
    assert not list((box.ctx().state_dir / write_intent.INTENT_DIR).glob("*.json"))


def test_a_capture_meeting_an_edit_on_every_attempt_writes_nothing_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    path = box.capture("Ada Lovelace", kind="person", body="Wrote the first program.").data.path
    _edit_before_commit(box, path, monkeypatch, times=EDIT_ATTEMPTS)
    with pytest.raises(EditedMeanwhile) as refused:
        capture(box.ctx(), CaptureRequest(title="Ada Lovelace", kind="person",
                                          body="Worked with Babbage."))
    assert path in refused.value.message and "Run the operation again" in refused.value.message
    text = box.read(path)
    assert "Worked with Babbage." not in text
    assert all(f"{HAND_LINE} ({n})" in text for n in range(1, EDIT_ATTEMPTS + 1))
    assert not list((box.ctx().state_dir / write_intent.INTENT_DIR).glob("*.json"))
    again = capture(box.ctx(), CaptureRequest(title="Ada Lovelace", kind="person",
                                              body="Worked with Babbage."))
    assert again.ok and box.read(path).count("Worked with Babbage.") == 1


def test_a_queued_capture_meeting_an_edit_stays_queued(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.ops import outbox

    box = VaultBox(tmp_path).init()

    def edited(*_args: Any) -> Any:
        raise EditedMeanwhile("people/ada-lovelace.md")

    class Queue:
        def __init__(self) -> None:
            self.marks: list[tuple[str, str]] = []

        def mark(self, rid: str, state: str, detail: str = "") -> None:
            self.marks.append((rid, state))

    monkeypatch.setitem(outbox.REPLAYERS, "capture", edited)
    queue = Queue()
    item = outbox._replay(box.ctx(), queue, {"id": "r1", "op": "capture", "args": {},
                                             "day": "2026-03-01"})
    assert item.outcome == "pending" and "edited" in item.detail
    assert queue.marks == []  # not marked: it replays at the next flush


def test_without_a_conditional_write_the_vault_reads_again_just_before_writing(
        tmp_path: Path) -> None:
    from echo_core.vault import Vault

    class PlainStorage:  # read and write only: no ``write_unless_changed``
        def __init__(self, inner: FolderStorage) -> None:
            self.inner = inner

        def read(self, path: str) -> str:
            return self.inner.read(path)

        def write(self, path: str, text: str) -> None:
            self.inner.write(path, text)

    inner = FolderStorage(str(tmp_path))
    inner.write("notes/a.md", "v1\n")
    box = VaultBox(tmp_path / "box").init()
    vault = Vault(PlainStorage(inner), box.ctx().vault.manifest)  # type: ignore[arg-type]
    assert vault.replace_note("notes/a.md", "v2\n", "v0\n") is False
    assert inner.read("notes/a.md") == "v1\n"
    assert vault.replace_note("notes/a.md", "v2\n", "v1\n") is True
    assert vault.replace_note("notes/b.md", "new\n", None) is True
    assert inner.read("notes/a.md") == "v2\n" and inner.read("notes/b.md") == "new\n"


def test_recovery_of_an_interrupted_capture_leaves_a_file_edited_during_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An outage after the note landed leaves the daily line for ``recover_pending``;
    a person saving the daily note while recovery writes it keeps their text, and the
    file is reported as a conflict."""
    from echo_core.ops.write_intent import recover_pending
    from echo_core.protocols import BackendUnavailable

    box = VaultBox(tmp_path).init()
    box.capture("Ada Lovelace", kind="person", body="Wrote the first program.")
    real = FolderStorage.write_unless_changed

    def down_at_daily(self: FolderStorage, path: str, text: str, expected: str | None) -> bool:
        if path.startswith("journal/daily/"):
            raise BackendUnavailable("503 (test)")
        return real(self, path, text, expected)

    monkeypatch.setattr(FolderStorage, "write_unless_changed", down_at_daily)
    queued = capture(box.ctx(), CaptureRequest(title="Ada Lovelace", kind="person",
                                               body="Worked with Babbage."))
    assert queued.action == "queued"
    monkeypatch.setattr(FolderStorage, "write_unless_changed", real)
    [intent] = (box.ctx().state_dir / write_intent.INTENT_DIR).glob("*.json")
    [daily_path] = [w["path"] for w in json.loads(intent.read_text(encoding="utf-8"))["writes"]
                    if w["path"].startswith("journal/daily/")]
    daily = box.vault / daily_path
    hand_text = daily.read_text(encoding="utf-8") + f"{HAND_LINE}\n"
    edits = saved_by_hand_at_first_fsync(
        monkeypatch, lambda: daily.write_text(hand_text, encoding="utf-8"))
    recovered = recover_pending(box.ctx())
    assert edits and HAND_LINE in daily.read_text(encoding="utf-8")
    assert recovered.conflicts == (daily_path,)
    assert not list((box.ctx().state_dir / write_intent.INTENT_DIR).glob("*.json"))


def test_an_append_meeting_an_edit_adds_its_line_to_the_edited_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = FolderStorage(str(tmp_path))
    storage.write("notes/a.md", "first\n")
    saved_by_hand_at_first_fsync(monkeypatch, lambda: (tmp_path / "notes/a.md").write_text(
        "first\nby hand\n", encoding="utf-8"))
    assert storage.append_line("notes/a.md", "appended") is True
    assert storage.read("notes/a.md") == "first\nby hand\nappended\n"
    assert not _temp_files(tmp_path)


def test_a_roll_back_leaves_a_file_edited_after_the_operation_wrote_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused later write undoes what landed, except a file a person saved since:
    their text is kept, not deleted or put back."""
    from echo_core.errors import EchoError, usage_error

    box = VaultBox(tmp_path).init()
    real = FolderStorage.write_unless_changed
    note = box.vault / "resources/people/grace-hopper.md"

    def write_then_person_saves(self: FolderStorage, path: str, text: str,
                                expected: str | None) -> bool:
        if path.startswith("journal/daily/"):
            raise usage_error("refused (test)")
        done = real(self, path, text, expected)
        if path.endswith("grace-hopper.md"):
            with open(note, "a", encoding="utf-8") as saved:
                saved.write(f"{HAND_LINE}\n")
        return done

    monkeypatch.setattr(FolderStorage, "write_unless_changed", write_then_person_saves)
    with pytest.raises(EchoError):
        capture(box.ctx(), CaptureRequest(title="Grace Hopper", kind="person",
                                          body="Wrote the first compiler."))
    assert HAND_LINE in note.read_text(encoding="utf-8")
    assert not list((box.ctx().state_dir / write_intent.INTENT_DIR).glob("*.json"))
