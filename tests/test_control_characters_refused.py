"""A title, alias, tag or appended line holding a control character (a NUL, an escape
sequence a terminal would run) is refused (2) on every surface; they were written raw,
so ``get`` sent ``\\x1b[2J`` to the reader's terminal. A tab is fine."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.notes_io import append_line
from tests.capture_kit import VaultBox


@pytest.mark.parametrize("bad", ["\x1b[2Jclear", "k\x00l", "bell\x07", "del\x7f"])
def test_control_characters_in_one_line_fields_are_refused(tmp_path: Path, bad: str) -> None:
    box = VaultBox(tmp_path).init()
    before = box.tree_digest()
    for write in (lambda: capture(box.ctx(), CaptureRequest(title=bad, kind="concept", body="b")),
                  lambda: capture(box.ctx(), CaptureRequest(title="Fine", kind="concept",
                                                            aliases=(bad,))),
                  lambda: capture(box.ctx(), CaptureRequest(title="Fine", kind="concept",
                                                            tags=(bad,))),
                  lambda: append_line(box.ctx(), "notes/n.md", bad)):
        with pytest.raises(EchoError) as refused:
            write()
        assert refused.value.code == ExitCode.USAGE and "control character" in refused.value.message
    assert box.tree_digest() == before


def test_a_tab_is_plain_text(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert capture(box.ctx(), CaptureRequest(title="Tab\there", kind="concept", body="b")).ok
    assert append_line(box.ctx(), "notes/n.md", "a\tb").data.changed
