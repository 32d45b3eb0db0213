"""``restore PATH previous``: the README's tour restores without pasting an id (issue 13,
item 20): ``previous`` is the newest kept text other than the note's current one."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.history import restore_note
from echo_core.ops.notes_io import put_note
from tests.capture_kit import VaultBox

NOTE = "resources/reading.md"
V1, V2 = "# Reading\n\nfirst\n", "# Reading\n\nsecond\n"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def test_previous_restores_the_text_before_the_last_write_and_toggles_back(box: VaultBox) -> None:
    put_note(box.ctx(), NOTE, V1)
    put_note(box.ctx(), NOTE, V2)
    preview = restore_note(box.ctx(), NOTE, "previous", confirm=False)
    assert preview.action == "preview" and (box.vault / NOTE).read_text() == V2
    assert restore_note(box.ctx(), NOTE, "previous", confirm=True).data.restored
    assert (box.vault / NOTE).read_text() == V1
    restore_note(box.ctx(), NOTE, "Previous", confirm=True)
    assert (box.vault / NOTE).read_text() == V2


def test_previous_skips_kept_texts_equal_to_the_current_one(box: VaultBox) -> None:
    put_note(box.ctx(), NOTE, V1)
    put_note(box.ctx(), NOTE, V2)
    put_note(box.ctx(), NOTE, V1)  # kept: V1, V2; current V1 -> previous is V2
    restore_note(box.ctx(), NOTE, "previous", confirm=True)
    assert (box.vault / NOTE).read_text() == V2


def test_previous_without_history_is_not_found(box: VaultBox) -> None:
    put_note(box.ctx(), NOTE, V1)
    with pytest.raises(EchoError) as error:
        restore_note(box.ctx(), NOTE, "previous", confirm=False)
    assert error.value.code == ExitCode.NOT_FOUND and "no history" in str(error.value)
