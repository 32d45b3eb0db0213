"""A capture never rebuilds a note from part of a person's save: while an editor saves a
note in place (truncate, write a part, write the rest), a capture of it waits for the
save to end and then adds its line to the person's whole text (SPEC §1.3: a person's
edit takes no lock). A save that does not end in time is an edit meanwhile: the capture
exits 1, nothing written, and the person's text is whole."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from echo_core.errors import EditedMeanwhile
from plugins.storage_fs import save_in_progress
from tests.capture_kit import VaultBox

NOTE = "resources/concepts/write-ahead-log.md"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Write Ahead Log", kind="concept", body="Seed qvseedx.").ok
    for n in range(3):
        assert box.capture("Write Ahead Log", kind="concept", body=f"Fact qvkeep{n}x.").ok
    return box


def _save_in_place(path: Path, text: str, pause: float, started: threading.Event) -> None:
    """An editor's in-place save: truncate, write half, pause, write the rest, close."""
    with path.open("r+", encoding="utf-8") as out:
        out.truncate(0)
        out.write(text[:len(text) // 2])
        out.flush()
        started.set()
        time.sleep(pause)
        out.write(text[len(text) // 2:])


def test_a_capture_during_an_in_place_save_keeps_the_whole_save_and_its_line(
        box: VaultBox) -> None:
    path = box.vault / NOTE
    saved = path.read_text(encoding="utf-8").replace("Fact qvkeep0x.", "Fact qvkeep0x. qvhandx")
    started = threading.Event()
    person = threading.Thread(target=_save_in_place, args=(path, saved, 0.4, started))
    person.start()
    assert started.wait(5)
    env = box.capture("Write Ahead Log", kind="concept", body="Fact qvnewx.")
    person.join()
    assert env.ok, env
    final = box.read(NOTE)
    for word in ("qvseedx", "qvkeep0x", "qvkeep1x", "qvkeep2x", "qvhandx", "qvnewx"):
        assert final.count(word) == 1, (word, final)
    assert final.startswith("---\n") and "# Write Ahead Log" in final


def test_a_save_that_does_not_end_in_time_stops_the_capture_with_nothing_written(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(save_in_progress, "SAVE_WAIT", 0.2)
    path = box.vault / NOTE
    saved = path.read_text(encoding="utf-8") + "- a hand line qvhandx\n"
    started = threading.Event()
    person = threading.Thread(target=_save_in_place, args=(path, saved, 2.5, started))
    person.start()
    assert started.wait(5)
    with pytest.raises(EditedMeanwhile) as stopped:
        box.capture("Write Ahead Log", kind="concept", body="Fact qvnewx.")
    person.join()
    assert stopped.value.code == 1
    assert box.read(NOTE) == saved


def test_a_file_just_replaced_by_another_writer_is_no_save_in_progress(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    note = tmp_path / "n.md"
    note.write_text("just written by another process\n", encoding="utf-8")
    slept: list[float] = []
    monkeypatch.setattr(save_in_progress.time, "sleep", slept.append)
    assert save_in_progress.settled(note)
    assert slept == []  # no quiet-period wait when no process holds it open for writing
    with note.open("a", encoding="utf-8"):
        assert not save_in_progress.settled(note, wait=0.0)
