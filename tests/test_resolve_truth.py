"""``resolve`` answers from the files: an entity index older than the notes (restored
or checked out) no longer sends it, or capture, to a note that is gone; and a name that
several entities answer to gives the same answer in any case, a title before an alias,
and says who else answers."""

from __future__ import annotations

import shutil
from pathlib import Path

from echo_core.ops.index_sync import sync_paths
from echo_core.ops.resolve import resolve
from tests.capture_kit import VaultBox

OSPREY = "projects/active/osprey-telemetry.md"


def test_an_index_older_than_the_notes_is_healed_not_believed(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert box.capture("Osprey Telemetry", kind="project", body="Osprey pipeline.").ok
    saved = tmp_path / "index-copy"
    shutil.copytree(box.vault / "_agent/index", saved)
    (box.vault / OSPREY).unlink()
    assert not resolve(box.ctx(), "Osprey Telemetry").data.match
    shutil.rmtree(box.vault / "_agent/index")
    shutil.copytree(saved, box.vault / "_agent/index")  # the old index is back
    assert not resolve(box.ctx(), "Osprey Telemetry").data.match
    again = box.capture("Osprey Telemetry", kind="project", body="more")
    assert again.ok and again.data.path == OSPREY, again.message
    assert "more" in box.read(OSPREY)


def test_a_name_several_entities_answer_to_is_one_answer_in_any_case(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    box.capture("Mercury", kind="concept", body="The planet.")
    box.capture("Mercury", kind="person", body="Freddie.", force=True)
    box.capture("Aardvark Labs", kind="company", body="x")
    company = box.vault / "resources/companies/aardvark-labs.md"  # an alias added by hand
    company.write_text(company.read_text().replace("tags: [company]",
                                                   "tags: [company]\naliases: [Mercury]"))
    sync_paths(box.ctx(), ["resources/companies/aardvark-labs.md"])
    answers = {resolve(box.ctx(), m).data.path for m in ("Mercury", "mercury", "MERCURY")}
    assert answers == {"resources/concepts/mercury.md"}
    found = resolve(box.ctx(), "Mercury")
    assert [c["slug"] for c in found.data.candidates] == ["mercury-2", "aardvark-labs"]
    assert "also answers to it" in found.message
