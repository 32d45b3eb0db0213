"""The duplicate gate stops a capture whose new note would take the name of a note whose
title a person changed by hand.

``ada-lovelace.md`` retitled "Augusta Ada King": a capture of "Ada Lovelace" resolved to
nothing (no title or alias says that any more), passed the gate (the names share one
token) and created ``ada-lovelace-2.md`` beside it, while ``resolve`` by slug still
found the first one. Now it stops (76) naming that note; ``--merge-into`` adds to it and
``--force`` still creates a second.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.ops.index_sync import sync_paths
from tests.capture_kit import VaultBox

PATH = "resources/people/ada-lovelace.md"


@pytest.fixture
def retitled(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Ada Lovelace", kind="person", body="First program.").data.path == PATH
    note = box.vault / PATH
    note.write_text(note.read_text().replace("# Ada Lovelace\n", "# Augusta Ada King\n"))
    sync_paths(box.ctx(), [PATH])  # what the CLI's freshness check does first
    return box


def test_a_capture_taking_a_retitled_notes_name_stops_at_the_gate(retitled: VaultBox) -> None:
    env = retitled.capture("Ada Lovelace", kind="person", body="Died 1852.")
    assert not env.ok and env.action == "duplicate-gate"
    assert [c["slug"] for c in env.data.candidates] == ["ada-lovelace"]
    assert "Augusta Ada King" in env.message and "merge_into='ada-lovelace'" in env.message
    assert sorted(p.name for p in (retitled.vault / PATH).parent.glob("*.md")) == [
        "README.md", "ada-lovelace.md"]


def test_merge_into_adds_to_it_and_force_still_creates_a_second(retitled: VaultBox) -> None:
    merged = retitled.capture("Ada Lovelace", kind="person", body="Died 1852.",
                              merge_into="ada-lovelace")
    assert merged.ok and merged.data.path == PATH and "Died 1852." in retitled.read(PATH)
    forced = retitled.capture("Ada Lovelace", kind="person", body="Another Ada.", force=True)
    assert forced.ok and forced.data.path == "resources/people/ada-lovelace-2.md"


def test_a_case_only_rename_with_a_new_title_stops_too(retitled: VaultBox) -> None:
    (retitled.vault / PATH).rename(retitled.vault / "resources/people/Ada-Lovelace.md")
    sync_paths(retitled.ctx(), [PATH, "resources/people/Ada-Lovelace.md"])
    env = retitled.capture("Ada Lovelace", kind="person", body="Died 1852.")
    assert not env.ok and env.action == "duplicate-gate"
    assert [c["slug"] for c in env.data.candidates] == ["Ada-Lovelace"]
    assert not (retitled.vault / PATH).exists()


def test_another_kind_with_that_name_does_not_stop_it(retitled: VaultBox) -> None:
    env = retitled.capture("Ada Lovelace", kind="concept", body="The idea of her.")
    assert env.ok and env.data.path == "resources/concepts/ada-lovelace-2.md"  # slugs: one each

