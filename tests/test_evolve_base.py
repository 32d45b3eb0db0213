"""``evolve --base VERSION`` refuses a stale edit: an agent that reads a note (``get``:
its ``version``), edits the text and evolves it must not archive away a capture (or a
person's edit) that landed in between. With the version it read, evolve writes nothing
and exits 1 when the note changed; with the current one it evolves as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.errors import EchoError
from echo_core.ops.evolve import evolve_note
from echo_core.ops.notes_io import get_note
from tests.capture_kit import VaultBox

NOTE = "resources/concepts/deploy-process.md"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Deploy Process", kind="concept", body="Deploys run from Jenkins.").ok
    return box


def test_evolve_from_a_version_read_before_a_capture_writes_nothing(box: VaultBox) -> None:
    read = get_note(box.ctx(), NOTE).data
    assert box.capture("Deploy Process", kind="concept", body="Rollbacks take 5 min qvx.").ok
    before = box.tree_digest()
    with pytest.raises(EchoError) as stale:
        evolve_note(box.ctx(), NOTE, "moved to Argo",
                    read.content.replace("Jenkins", "Argo CD"), base=read.version)
    assert stale.value.code == 1 and "changed since" in stale.value.message
    assert box.tree_digest() == before
    assert "qvx" in box.read(NOTE)


def test_evolve_from_the_current_version_evolves(box: VaultBox) -> None:
    read = get_note(box.ctx(), NOTE).data
    env = evolve_note(box.ctx(), NOTE, "moved to Argo",
                      read.content.replace("Jenkins", "Argo CD"), base=read.version[:6])
    assert env.ok and env.data.changed
    assert "Argo CD" in box.read(NOTE)


def test_get_names_the_whole_notes_version_even_for_a_section(box: VaultBox) -> None:
    whole = get_note(box.ctx(), NOTE).data
    part = get_note(box.ctx(), NOTE, section="Notes").data
    assert len(whole.version) == 12 and part.version == whole.version
