"""Recall never answers a word with a note that no longer holds it.

A note saved in place (as Obsidian and most editors save) leaves its folder's stamp as it
was, so the bounded freshness check may not have come to it yet: recall answered the old
word with the note as its top hit ("matched no query term"). Now a hit whose note, as
read, holds none of the query's words is dropped and its index entry brought up to date.
"""

from __future__ import annotations

import os
from pathlib import Path

from echo_core.ops.recall import recall
from tests.capture_kit import VaultBox

NOTE = "resources/concepts/gearbox.md"


def test_a_word_gone_from_a_note_saved_in_place_is_not_answered_with_it(
        tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert box.capture("Gearbox", kind="concept", body="The gearbox uses ghostword oil.").ok
    assert [h.path for h in recall(box.ctx(), "ghostword").data.primary] == [NOTE]
    note = box.vault / NOTE
    stat = note.stat()
    text = note.read_text().replace("ghostword ", "")
    with open(note, "r+", encoding="utf-8") as handle:  # saved in place, same size order
        handle.write(text)
        handle.truncate()
    os.utime(note, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # as if the stamp missed it
    # the op itself runs no freshness check (the surfaces do, bounded): it has not come to it
    assert recall(box.ctx(), "ghostword").data.primary == ()
    assert recall(box.ctx(), "gearbox oil").data.primary[0].path == NOTE
