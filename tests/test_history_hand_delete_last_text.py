"""A note deleted by hand (``rm``, Obsidian's delete): ``history`` and ``restore`` say
whether its last text is among the kept versions (SPEC §5.6).

A version is kept when a write replaces a text, so the text the last write left is kept
only once a later write replaced it. The vault-change check that notices the deletion
records the hash of the note's last text (``NoteHistory.record_deleted``): ``history``
marks that version when it is kept and says when it is not, ``restore ... previous``
brings the last text back when it is kept, and a restore of an older text warns."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from echo_core import history as history_module
from echo_core.errors import EchoError, ExitCode
from echo_core.history import DELETED_LOG, NoteHistory
from echo_core.models import Envelope
from echo_core.operations.invoke import invoke
from echo_core.ops.history import note_history
from tests.capture_kit import VaultBox
from tests.conftest import run_cli

NOTE = "resources/concepts/plan.md"
V1, V2, V3 = "# Plan\n\nv1 text\n", "# Plan\n\nv2 text IMPORTANT\n", "# Plan\n\nv3\n"
NOW = {"ECHO_TODAY": "2026-03-10", "ECHO_NOW": "2026-03-10T10:00:00"}


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    history(box, "inbox/captures/inbox.md")  # a first check: the manifest's baseline
    return box


def run(box: VaultBox, verb: str, **params: Any) -> Envelope[Any]:
    """``verb`` as every surface runs it (its vault-change check first)."""
    return invoke(box.ctx(**NOW), verb, params)


def history(box: VaultBox, path: str) -> Envelope[Any]:
    return run(box, "history", path=path)


def put(box: VaultBox, text: str) -> None:
    assert run(box, "put", path=NOTE, text=text).ok


def v_id(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def test_history_of_a_note_deleted_by_hand_says_its_last_text_was_not_kept(
        box: VaultBox) -> None:
    put(box, V1)
    put(box, V2)  # V1 kept; V2, the note's last text, is only in the note
    (box.vault / NOTE).unlink()
    env = history(box, NOTE)
    assert env.ok and not env.data.exists
    assert [v.version_id for v in env.data.versions] == [v_id(V1)]
    assert env.data.deleted is not None and not env.data.deleted.kept
    assert env.data.deleted.version_id == v_id(V2)
    assert "deleted by hand" in env.message and f"last text (version {v_id(V2)}) was not kept" \
        in env.message


def test_a_restore_of_an_older_text_of_a_deleted_note_warns(box: VaultBox) -> None:
    put(box, V1)
    put(box, V2)
    (box.vault / NOTE).unlink()
    preview = run(box, "restore", path=NOTE, version_id="previous")  # no check ran yet
    assert preview.action == "preview"
    assert any(v_id(V2) in w and "not kept" in w for w in preview.warnings), preview.warnings
    done = run(box, "restore", path=NOTE, version_id="previous", confirm=True)
    assert done.data.restored and box.read(NOTE) == V1
    assert any("deleted by hand" in w and "not the note as it was" in w for w in done.warnings)


def test_previous_brings_back_the_last_text_when_it_is_kept(box: VaultBox) -> None:
    put(box, V1)
    put(box, V2)
    put(box, V3)
    put(box, V2)  # kept: V1, V2, V3 (V2 kept again later: newest), the note is V2
    put(box, V3)  # the note is V3, kept since the write before: V2 is newest kept
    restore = run(box, "restore", path=NOTE, version_id=v_id(V2), confirm=True)
    assert restore.data.restored  # the note is V2, V3 kept as the newest version
    (box.vault / NOTE).unlink()
    env = history(box, NOTE)
    assert env.data.deleted is not None and env.data.deleted.kept
    assert env.data.versions[0].version_id == v_id(V3)  # newest kept is not the last text
    done = run(box, "restore", path=NOTE, version_id="previous", confirm=True)
    assert done.data.restored and box.read(NOTE) == V2 and not done.warnings


def marked(listing: str, mark: str) -> str:
    """The one line of ``listing`` with ``mark``, stripped."""
    lines = [line.strip() for line in listing.splitlines() if mark in line]
    assert len(lines) == 1, listing
    return lines[0]


def test_the_cli_listing_marks_the_note_now_and_a_deleted_notes_last_text(
        box: VaultBox) -> None:
    put(box, V1)
    put(box, V2)
    put(box, V1)  # the note is V1, which is kept too
    env = {**box.env(**NOW), "ECHO_VAULT": str(box.vault), "ECHO_STATE_DIR": str(box.state)}
    listed = run_cli(["history", NOTE], env=env)
    assert f"{v_id(V1)}  " in listed.stdout
    assert marked(listed.stdout, "<- the note now").startswith(v_id(V1))
    (box.vault / NOTE).unlink()
    listed = run_cli(["history", NOTE], env=env)
    assert listed.returncode == 0, listed.stderr
    assert marked(listed.stdout, "<- its last text").startswith(v_id(V1))


def test_a_deleted_note_never_overwritten_names_the_deletion(box: VaultBox) -> None:
    put(box, V1)
    (box.vault / NOTE).unlink()
    with pytest.raises(EchoError) as error:
        history(box, NOTE)
    assert error.value.code == ExitCode.NOT_FOUND
    assert "deleted by hand" in str(error.value) and "no text of it was kept" in str(error.value)


def test_a_note_written_again_after_its_deletion_is_not_warned_about(box: VaultBox) -> None:
    put(box, V1)
    put(box, V2)
    (box.vault / NOTE).unlink()
    assert history(box, NOTE).data.deleted is not None  # the deletion is recorded
    later = {"ECHO_TODAY": "2026-03-11", "ECHO_NOW": "2026-03-11T10:00:00"}
    assert invoke(box.ctx(**later), "put", {"path": NOTE, "text": V3}).ok
    box.ctx(**later).vault.delete_note(NOTE)  # a delete by a write (V3 is kept)
    env = note_history(box.ctx(**later), NOTE)
    assert env.data.deleted is not None and env.data.deleted.kept
    assert env.data.deleted.version_id == v_id(V3)


def test_the_deletion_log_survives_a_torn_line_and_stays_bounded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_module, "DELETED_KEPT", 5)
    kept = NoteHistory(tmp_path / "history")
    kept.record_deleted([("a.md", "a" * 16)], at="2026-01-01T00:00:00")
    with open(tmp_path / "history" / DELETED_LOG, "a", encoding="utf-8") as log:
        log.write('{"path": "x.md", "h"')  # a write cut short
    kept.record_deleted([("b.md", "b" * 16)], at="2026-01-02T00:00:00")
    assert kept.deleted("x.md") is None
    assert kept.deleted("b.md") == history_module.Deleted("b.md", "b" * 16, "2026-01-02T00:00:00")
    kept.record_deleted([("a.md", "c" * 16)], at="2026-01-03T00:00:00")
    assert kept.deleted("a.md").h == "c" * 16  # type: ignore[union-attr]
    for i in range(30):
        kept.record_deleted([(f"n{i}.md", "d" * 16)], at="2026-01-04T00:00:00")
    lines = (tmp_path / "history" / DELETED_LOG).read_text(encoding="utf-8").splitlines()
    assert 5 <= len(lines) <= 10
    assert kept.deleted("n29.md") is not None
