"""``rollup`` sees the vault as it is on disk: a note a person made or edited by hand (an
editor, not echo-memory) counts at once, with the kind and title it has now, without
waiting for another command to index it; and a note that is not UTF-8 is still named in
a warning, even when the entity index never held it or has dropped it."""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path

import pytest

from echo_core.ops.rollup import rollup
from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun, run_main

HAND_MADE = "resources/concepts/hand-made.md"
NOTE = ("---\ntype: concept\nstatus: active\ncreated: 2026-03-01\nupdated: 2026-03-01\n"
        "tags: [concept]\n---\n# Hand Made\n\ntext\n")
LATIN1 = b"---\ntype: concept\n---\n# Jos\xe9\n\nCaf\xe9.\n"
IN_WEEK = _dt.datetime(2026, 2, 27, 12, tzinfo=_dt.UTC).timestamp()


def _cli(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         *args: str) -> CliRun:
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    return run_main(["rollup", *base, *args], capsys, monkeypatch)


def test_a_hand_made_note_is_in_the_rollup_at_once(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    (box.vault / HAND_MADE).write_text(NOTE, encoding="utf-8")
    data = rollup(box.ctx(), "week", "2026-03-01").data
    made = [(n.path, n.title, n.kind, n.date) for n in data.created if n.path == HAND_MADE]
    assert made == [(HAND_MADE, "Hand Made", "concept", "2026-03-01")]


def test_cli_lists_a_hand_made_note_as_created(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    (box.vault / HAND_MADE).write_text(NOTE, encoding="utf-8")
    done = _cli(box, capsys, monkeypatch, "--date", "2026-03-01", "--json")
    assert done.code == 0, done.err
    assert HAND_MADE in [n["path"] for n in json.loads(done.out)["created"]]


def test_a_hand_made_note_without_type_takes_its_folders_kind(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    path = "decisions/2026-02-27-use-tabs.md"
    (box.vault / path).write_text("---\ndate: 2026-02-27\ncreated: 2026-02-27\n---\n"
                                  "# Use tabs\n", encoding="utf-8")
    data = rollup(box.ctx(), "week", "2026-03-01").data
    assert [(d.path, d.title, d.kind) for d in data.decisions] == [(path, "Use tabs", "decision")]


def test_a_hand_edited_note_is_listed_with_its_new_title(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    path = box.capture("Old Name", kind="concept", today="2026-02-10").data.path
    note = box.vault / path
    note.write_text(note.read_text(encoding="utf-8").replace("# Old Name", "# New Name")
                    .replace("updated: 2026-02-10", "updated: 2026-02-27"), encoding="utf-8")
    data = rollup(box.ctx(), "week", "2026-03-01").data
    assert [(n.path, n.title, n.date) for n in data.updated] == [(path, "New Name", "2026-02-27")]


def test_a_hand_made_note_that_is_not_utf8_is_named_in_a_warning(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    (box.vault / "resources/people/jose.md").write_bytes(LATIN1)
    env = rollup(box.ctx(), "week", "2026-03-01")
    assert env.ok
    assert env.warnings == ("resources/people/jose.md is not UTF-8 text; rollup skipped it",)


def test_cli_warns_once_about_an_indexed_note_rewritten_as_latin1_and_lists_a_hand_made_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    bad = box.capture("Use Postgres", kind="decision", date="2026-02-27",
                      today="2026-02-27").data.path
    (box.vault / bad).write_bytes(LATIN1)
    os.utime(box.vault / bad, (IN_WEEK, IN_WEEK))
    (box.vault / HAND_MADE).write_text(NOTE, encoding="utf-8")
    for _ in range(2):  # the second run too: the entity index may have dropped it by then
        done = _cli(box, capsys, monkeypatch, "--date", "2026-03-01", "--json")
        assert done.code == 0, done.err
        data = json.loads(done.out)
        assert HAND_MADE in [n["path"] for n in data["created"]]
        assert data["warnings"] == [f"{bad} is not UTF-8 text; rollup skipped it"]


def test_a_hand_made_part_of_an_ingested_document_is_not_listed(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    part = "resources/references/manual-part-2.md"
    (box.vault / part).write_text("---\ncreated: 2026-03-01\npart_of: manual\n"
                                  "ingest_hash: abc\n---\n# Manual, part 2\n", encoding="utf-8")
    data = rollup(box.ctx(), "week", "2026-03-01").data
    assert part not in [n.path for n in data.created]
