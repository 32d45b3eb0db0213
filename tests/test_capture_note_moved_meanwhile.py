"""A capture whose note a person moves (or deletes) while it runs finds it again.

The capture resolved the note, then read it at its old path and failed with 44 ("no
file"): 31 of 40 captures racing a person moving the note to and fro were lost. Now it
brings the indexes up to date and resolves again: it updates the note where it is now,
or creates it anew when it was deleted; nothing is doubled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import echo_core.ops.capture as capture_module
from tests.capture_kit import VaultBox

OLD = "resources/concepts/mover-note.md"
NEW = "resources/concepts/sub/mover-note.md"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Mover Note", kind="concept", body="base").data.path == OLD
    return box


def _before_first_update(monkeypatch: pytest.MonkeyPatch, act: Any) -> None:
    real = capture_module._update
    calls = []

    def update(*args: Any, **kwargs: Any) -> Any:
        if not calls:
            act()
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(capture_module, "_update", update)


def test_a_note_moved_while_the_capture_runs_is_updated_where_it_went(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    def move() -> None:
        (box.vault / NEW).parent.mkdir(parents=True, exist_ok=True)
        (box.vault / OLD).rename(box.vault / NEW)

    _before_first_update(monkeypatch, move)
    env = box.capture("Mover Note", kind="concept", body="update 1")
    assert env.ok and env.data.path == NEW, env.message
    assert "update 1" in box.read(NEW) and not (box.vault / OLD).exists()
    assert sorted(p.name for p in (box.vault / "resources/concepts").rglob("mover*")) == [
        "mover-note.md"]


def test_a_note_deleted_while_the_capture_runs_is_created_anew(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    _before_first_update(monkeypatch, lambda: (box.vault / OLD).unlink())
    env = box.capture("Mover Note", kind="concept", body="update 1")
    assert env.ok and env.data.path == OLD and env.action == "created", env.message
    assert "update 1" in box.read(OLD)
