"""A note a person moves keeps its name, and its old path does not grow a second note.

The index sync put the moved note under a new slug (``alpha-project-2``: the old entry
still held ``alpha-project`` when the new path was named), so ``[[alpha-project]]`` and
``resolve alpha-project`` lost it; and an ``append`` to the old path (an agent holding
it) made a stub there with the same name, which ``resolve`` and ``capture`` then took.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.index_sync import sync_paths
from echo_core.ops.notes_io import append_line, put_note
from tests.capture_kit import VaultBox

OLD = "projects/active/alpha-project.md"
NEW = "projects/on-hold/alpha-project.md"


def _notes(box: VaultBox) -> dict[str, bytes]:
    return {p.relative_to(box.vault).as_posix(): p.read_bytes()
            for p in box.vault.rglob("*.md") if not p.relative_to(box.vault).as_posix()
            .startswith("_agent/")}


@pytest.fixture
def moved(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Alpha Project", kind="project", body="Alpha body.").data.path == OLD
    (box.vault / NEW).parent.mkdir(parents=True, exist_ok=True)
    (box.vault / OLD).rename(box.vault / NEW)
    return box


def test_a_moved_note_keeps_its_slug_in_the_index(moved: VaultBox) -> None:
    done = sync_paths(moved.ctx(), [OLD, NEW])
    assert done.entities_put == ("alpha-project",) and done.entities_removed == ()
    assert moved.entity("alpha-project").path == NEW
    assert moved.ctx().entity_names.by_paths([OLD]) == {}


@pytest.mark.parametrize("write", [
    lambda ctx: append_line(ctx, OLD, "- 2026-03-01: agent note"),
    lambda ctx: put_note(ctx, "notes/alpha-project.md", "# Alpha again\n"),
])
def test_a_write_creating_a_second_note_of_a_moved_notes_name_is_refused(
        moved: VaultBox, write: object) -> None:
    before = _notes(moved)
    with pytest.raises(EchoError) as refused:
        write(moved.ctx())  # type: ignore[operator]
    assert refused.value.code == ExitCode.NOT_FOUND
    assert NEW in refused.value.message and "Nothing was written" in refused.value.message
    assert _notes(moved) == before  # the index caught up (under _agent/); no note changed
    assert not (moved.vault / OLD).exists()


def test_append_still_creates_a_note_whose_name_is_free(moved: VaultBox) -> None:
    assert append_line(moved.ctx(), "notes/brand-new.md", "- hello").data.changed
    assert (moved.vault / "notes/brand-new.md").read_text() == "- hello\n"
    assert append_line(moved.ctx(), NEW, "- 2026-03-01: agent note").data.changed
