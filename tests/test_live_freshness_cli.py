"""A short-lived process sees notes changed outside echo-memory before it answers
(issue 14 item 3, SPEC §5.1): hand edits, new hand-written notes and deletions reach
recall, resolve and capture without anyone running ``reindex`` or ``sweep``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli_inproc import vault_runner

pytestmark = pytest.mark.usefixtures("isolated_env")


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    return vault_runner(tmp_path, capsys, monkeypatch)


def recalled(cli, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    done = cli("recall", query, "--json")
    assert done.code == 0, done.err
    return [hit["path"] for hit in json.loads(done.out)["primary"]]


def write(vault: Path, rel: str, text: str) -> None:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_hand_edit_is_seen_by_the_next_recall(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("capture", "Grace Hopper", "--kind", "person", "--body", "COBOL").code == 0
    assert recalled(cli, "COBOL") == ["resources/people/grace-hopper.md"]
    note = cli.vault / "resources/people/grace-hopper.md"
    note.write_text(note.read_text("utf-8").replace("COBOL", "nanoseconds wire"), "utf-8")
    assert recalled(cli, "nanoseconds") == ["resources/people/grace-hopper.md"]
    assert recalled(cli, "COBOL") == []


def test_a_hand_edit_in_place_keeping_the_folder_stamp_is_seen(cli) -> None:  # type: ignore[no-untyped-def]
    """An editor writing in place changes no folder mtime: the rotating window finds it."""
    assert cli("capture", "Ada", "--kind", "person", "--body", "engine").code == 0
    recalled(cli, "engine")
    note = cli.vault / "resources/people/ada.md"
    folder = note.parent
    before = folder.stat().st_mtime_ns
    with note.open("a", encoding="utf-8") as handle:
        handle.write("\nquaternion notes\n")
    os.utime(folder, ns=(before, before))
    assert recalled(cli, "quaternion") == ["resources/people/ada.md"]


def test_a_new_hand_written_note_is_an_entity_at_once(cli) -> None:  # type: ignore[no-untyped-def]
    write(cli.vault, "resources/people/Ada Lovelace.md",
          "---\naliases: [Countess of Lovelace]\n---\n# Ada Lovelace\n\nAnalytical engine.\n")
    assert recalled(cli, "analytical") == ["resources/people/Ada Lovelace.md"]
    found = cli("resolve", "Countess of Lovelace", "--json")
    assert json.loads(found.out)["path"] == "resources/people/Ada Lovelace.md"
    updated = cli("capture", "Ada Lovelace", "--kind", "person", "--body", "Notes on Babbage")
    assert updated.code == 0, updated.err
    assert "updated resources/people/Ada Lovelace.md" in updated.out
    assert sorted(p.name for p in (cli.vault / "resources/people").glob("*.md")
                  if p.name != "README.md") == ["Ada Lovelace.md"]


def test_a_note_deleted_by_hand_leaves_both_indexes(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("capture", "Grace Hopper", "--kind", "person", "--body", "COBOL").code == 0
    assert recalled(cli, "COBOL")
    (cli.vault / "resources/people/grace-hopper.md").unlink()
    assert recalled(cli, "COBOL") == []
    assert json.loads(cli("resolve", "Grace Hopper", "--json").out)["match"] is False
    again = cli("capture", "Grace Hopper", "--kind", "person", "--body", "back")
    assert again.code == 0 and "created resources/people/grace-hopper.md" in again.out


def test_a_lookalike_title_is_not_gated_by_a_note_deleted_by_hand(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("capture", "Alan Turing", "--kind", "person").code == 0
    assert cli("capture", "Alan Turring", "--kind", "person").code == 76
    (cli.vault / "resources/people/alan-turing.md").unlink()
    typo = cli("capture", "Alan Turring", "--kind", "person")
    assert typo.code == 0, typo.out + typo.err
    assert "created resources/people/alan-turring.md" in typo.out


def test_a_note_moved_out_of_a_kind_folder_stops_being_an_entity(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("capture", "Kappa", "--kind", "concept", "--body", "greek").code == 0
    assert json.loads(cli("resolve", "Kappa", "--json").out)["path"]
    src = cli.vault / "resources/concepts/kappa.md"
    (cli.vault / "scratch").mkdir()
    src.rename(cli.vault / "scratch/kappa.md")
    assert json.loads(cli("resolve", "Kappa", "--json").out)["match"] is False
    assert recalled(cli, "greek") == ["scratch/kappa.md"]


def test_freshness_off_leaves_the_indexes_as_they_were(cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert cli("capture", "Grace Hopper", "--kind", "person", "--body", "COBOL").code == 0
    recalled(cli, "COBOL")
    monkeypatch.setenv("ECHO_FRESHNESS", "off")
    (cli.vault / "resources/people/grace-hopper.md").unlink()
    assert json.loads(cli("resolve", "Grace Hopper", "--json").out)["match"] is True
    monkeypatch.delenv("ECHO_FRESHNESS")
    assert json.loads(cli("resolve", "Grace Hopper", "--json").out)["match"] is False


def test_a_hand_edit_in_place_is_seen_even_past_the_time_budget(  # type: ignore[no-untyped-def]
        cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rotating window stats a first 32 notes whatever its budget: a small vault is
    covered whole even by a process descheduled past its deadline (1 us here)."""
    assert cli("capture", "Ada", "--kind", "person", "--body", "engine").code == 0
    recalled(cli, "engine")
    monkeypatch.setenv("ECHO_FRESH_BUDGET_MS", "0.001")
    note = cli.vault / "resources/people/ada.md"
    before = note.parent.stat().st_mtime_ns
    with note.open("a", encoding="utf-8") as handle:
        handle.write("\nquaternion notes\n")
    os.utime(note.parent, ns=(before, before))
    assert recalled(cli, "quaternion") == ["resources/people/ada.md"]
