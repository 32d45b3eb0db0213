"""A new note whose path differs from an existing file's only in letter case or Unicode
form is refused: on macOS and Windows the two are one file, and Obsidian Sync keeps one.
``put`` and ``append`` made both (``Inbox.md`` beside ``inbox.md``, ``café.md`` composed
beside ``café.md`` decomposed)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.notes_io import append_line, put_note
from tests.capture_kit import VaultBox

NFC = unicodedata.normalize("NFC", "notes/café.md")
NFD = unicodedata.normalize("NFD", "notes/café.md")


@pytest.mark.parametrize(("first", "second"), [("notes/Inbox.md", "notes/inbox.md"),
                                               (NFC, NFD), (NFD, NFC)])
def test_a_case_or_unicode_twin_of_a_note_is_refused(tmp_path: Path, first: str,
                                                      second: str) -> None:
    box = VaultBox(tmp_path).init()
    assert put_note(box.ctx(), first, "one\n").data.changed
    for write in (lambda: put_note(box.ctx(), second, "two\n"),
                  lambda: append_line(box.ctx(), second, "- two")):
        with pytest.raises(EchoError) as refused:
            write()
        assert refused.value.code == ExitCode.USAGE and first in refused.value.message
    assert [p.name for p in (box.vault / "notes").iterdir()] == [first.split("/")[1]]
    assert put_note(box.ctx(), first, "one again\n").data.changed  # the note itself: fine
