"""Notes echo-memory writes are recorded as seen (``echo_core.own_writes``): the next
process's freshness check does not list their folders again or take them for hand
edits, while a person's change next to them is still found."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from echo_core.entities import EntityStore
from echo_core.ops import freshness
from echo_core.ops.vault_changes import manifest_of
from tests.capture_kit import VaultBox
from tests.cli_inproc import vault_runner

pytestmark = pytest.mark.usefixtures("isolated_env")


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    run = vault_runner(tmp_path, capsys, monkeypatch)
    assert run("sweep", "--fast").code == 0  # the manifest's baseline
    run.box = VaultBox(tmp_path)
    return run


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The note folders freshness checks list (they list a folder whose stamp moved)."""
    seen: list[str] = []
    real = freshness.scan_folder

    def spy(storage: Any, folder: str) -> Any:
        if not folder.startswith("_agent"):  # its lock and index files move it each time
            seen.append(folder)
        return real(storage, folder)

    monkeypatch.setattr(freshness, "scan_folder", spy)
    return seen


def recalled(cli, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    done = cli("recall", query, "--json")
    assert done.code == 0, done.err
    return [hit["path"] for hit in json.loads(done.out)["primary"]]


def test_a_capture_leaves_the_next_check_nothing_to_list(cli, listings) -> None:  # type: ignore[no-untyped-def]
    assert cli("capture", "Grace Hopper", "--kind", "person", "--body", "COBOL").code == 0
    assert cli("capture", "Grace Hopper", "--kind", "person", "--body", "Nanoseconds").code == 0
    listings.clear()
    assert recalled(cli, "nanoseconds") == ["resources/people/grace-hopper.md"]
    assert listings == []
    path = "resources/people/grace-hopper.md"
    row = manifest_of(cli.box.ctx()).rows([path])[path]
    stat = (cli.vault / path).stat()
    assert row[:2] == (stat.st_size, stat.st_mtime_ns)


def test_a_note_added_by_hand_before_a_capture_in_the_same_folder_is_found(  # type: ignore[no-untyped-def]
        cli, listings) -> None:
    assert cli("capture", "Grace Hopper", "--kind", "person", "--body", "COBOL").code == 0
    (cli.vault / "resources/people/ada-lovelace.md").write_text(
        "# Ada Lovelace\n\nAnalytical engine.\n", encoding="utf-8")
    # the capture's own check finds the hand-written note first
    assert cli("capture", "Alan Turing", "--kind", "person", "--body", "Enigma").code == 0
    assert recalled(cli, "analytical") == ["resources/people/ada-lovelace.md"]
    assert "ada-lovelace" in EntityStore(cli.box.ctx().storage).load().entities


def test_a_folder_changed_by_someone_else_first_keeps_its_old_stamp(  # type: ignore[no-untyped-def]
        cli, listings, monkeypatch: pytest.MonkeyPatch) -> None:
    """A person adds a note after the capture's freshness check and before its write:
    the capture must not record the folder as seen, or that note is never found."""
    assert cli("capture", "Grace Hopper", "--kind", "person", "--body", "COBOL").code == 0
    real = freshness.freshen_for

    def then_a_person_writes(ctx: Any, mode: str) -> Any:
        done = real(ctx, mode)
        (cli.vault / "resources/people/ada-lovelace.md").write_text(
            "# Ada Lovelace\n\nAnalytical engine.\n", encoding="utf-8")
        return done

    monkeypatch.setattr(freshness, "freshen_for", then_a_person_writes)
    assert cli("capture", "Alan Turing", "--kind", "person", "--body", "Enigma").code == 0
    monkeypatch.setattr(freshness, "freshen_for", real)
    listings.clear()
    assert recalled(cli, "analytical") == ["resources/people/ada-lovelace.md"]
    assert "resources/people" in listings


def test_a_new_note_put_in_a_kind_folder_is_an_entity_at_once(  # type: ignore[no-untyped-def]
        cli, listings, tmp_path: Path) -> None:
    source = tmp_path / "dijkstra.md"
    source.write_text("# Edsger Dijkstra\n\nShortest paths.\n", encoding="utf-8")
    done = cli("put", "resources/people/edsger-dijkstra.md", str(source))
    assert done.code == 0, done.err
    assert EntityStore(cli.box.ctx().storage).load().get("edsger-dijkstra") is not None
    listings.clear()
    assert recalled(cli, "shortest paths") == ["resources/people/edsger-dijkstra.md"]
    assert listings == []


def test_a_note_edited_by_hand_after_a_capture_is_still_seen(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("capture", "Grace Hopper", "--kind", "person", "--body", "COBOL").code == 0
    note = cli.vault / "resources/people/grace-hopper.md"
    before = note.parent.stat().st_mtime_ns
    with note.open("a", encoding="utf-8") as handle:
        handle.write("\nquaternion notes\n")
    os.utime(note.parent, ns=(before, before))
    assert recalled(cli, "quaternion") == ["resources/people/grace-hopper.md"]


def test_an_operation_that_fails_records_nothing(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Killed after its note write, before the entity commit: the note is not recorded as
    seen; the next capture finishes the operation and nothing is doubled."""
    assert cli("capture", "Grace Hopper", "--kind", "person", "--body", "COBOL").code == 0
    path = "resources/people/grace-hopper.md"
    row_before = manifest_of(cli.box.ctx()).rows([path])[path]

    def refused(self: EntityStore, *args: Any, **kwargs: Any) -> None:
        raise OSError(5, "journal write failed (test)")

    monkeypatch.setattr(EntityStore, "record", refused)
    assert cli("capture", "Grace Hopper", "--kind", "person", "--body", "Flow-matic").code != 0
    monkeypatch.undo()
    assert manifest_of(cli.box.ctx()).rows([path])[path] == row_before
    assert cli("capture", "Grace Hopper", "--kind", "person", "--body", "Mark I").code == 0
    text = (cli.vault / path).read_text("utf-8")
    assert text.count("Flow-matic") == 1 and text.count("Mark I") == 1
    assert sorted(p.name for p in (cli.vault / "resources/people").glob("*.md")
                  if p.name != "README.md") == ["grace-hopper.md"]


def test_a_folder_changed_after_the_write_and_before_the_settle_keeps_its_old_stamp(  # type: ignore[no-untyped-def]
        cli, listings, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer adds a note to the same folder once this capture released the lock
    and before it records its writes: the folder is not recorded as seen, so the next
    check lists it and finds that note."""
    from echo_core.own_writes import OwnWrites

    assert cli("capture", "Grace Hopper", "--kind", "person", "--body", "COBOL").code == 0
    real = OwnWrites.settle

    def then_someone_writes(self: OwnWrites, ctx: Any) -> None:
        (cli.vault / "resources/people/ada-lovelace.md").write_text(
            "# Ada Lovelace\n\nAnalytical engine.\n", encoding="utf-8")
        real(self, ctx)

    monkeypatch.setattr(OwnWrites, "settle", then_someone_writes)
    assert cli("capture", "Alan Turing", "--kind", "person", "--body", "Enigma").code == 0
    monkeypatch.setattr(OwnWrites, "settle", real)
    listings.clear()
    assert recalled(cli, "analytical") == ["resources/people/ada-lovelace.md"]
    assert "resources/people" in listings


def test_no_untracked_folder_is_recorded_or_listed_after_captures(  # type: ignore[no-untyped-def]
        cli, monkeypatch: pytest.MonkeyPatch) -> None:
    listed: list[str] = []
    real = freshness.scan_folder

    def spy(storage: Any, folder: str) -> Any:
        listed.append(folder)
        return real(storage, folder)

    monkeypatch.setattr(freshness, "scan_folder", spy)
    for body in ("COBOL", "Nanoseconds", "Compilers"):
        assert cli("capture", "Grace Hopper", "--kind", "person", "--body", body).code == 0
    assert recalled(cli, "compilers") == ["resources/people/grace-hopper.md"]
    # the entity journal in _agent/index moves that folder on every capture: not looked at
    assert "_agent/index" not in listed
    assert set(listed) <= {"_agent"}  # the vault lock file comes and goes there
    recorded = manifest_of(cli.box.ctx()).folders()
    assert "_agent" in recorded and "_agent/sessions" in recorded
    assert not [f for f in recorded if freshness.untracked_folder(f)]


def test_an_untracked_folder_an_older_check_recorded_is_forgotten(cli) -> None:  # type: ignore[no-untyped-def]
    manifest = manifest_of(cli.box.ctx())
    manifest.update(folders={"_agent/index": 1, "templates": 2})
    assert recalled(cli, "anything at all") == []
    recorded = manifest_of(cli.box.ctx()).folders()
    assert "_agent/index" not in recorded and "templates" not in recorded
