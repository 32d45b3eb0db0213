"""What ``sweep --apply`` says it did is what it did: a change a person's save refused
(the note was saved between the sweep's read and its write, so the sweep left it as
saved) is neither listed nor counted, and the entity index holds the note as saved; a
re-run on the unchanged vault reports no change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import echo_core.ops.sweep.full as full_module
from echo_core.entities import content_hash
from echo_core.ops.sweep import full_sweep
from echo_core.ops.sweep.decay_model import DecayReport
from echo_core.ops.sweep.decay_observations import PREFERENCES_PATH
from tests.capture_kit import VaultBox

A = "resources/concepts/a.md"
B = "resources/concepts/b.md"
WORKING = "_agent/memory/working/deploy-scratch.md"
PERSON = "a line a person saved\n"


def _saved_meanwhile(monkeypatch: pytest.MonkeyPatch, box: VaultBox, name: str,
                     path: str) -> None:
    """A person saves ``path`` right after the sweep planned (``full.<name>``)."""
    real = getattr(full_module, name)

    def planned_then_saved(*args: Any, **kwargs: Any) -> Any:
        plan = real(*args, **kwargs)
        note = box.vault / path
        note.write_text(note.read_text("utf-8") + PERSON, "utf-8")
        return plan

    monkeypatch.setattr(full_module, name, planned_then_saved)


def _decay(env: Any) -> DecayReport:
    decay = env.data.decay
    assert isinstance(decay, DecayReport)
    return decay


def _hand_notes(box: VaultBox) -> None:
    (box.vault / A).parent.mkdir(parents=True, exist_ok=True)
    (box.vault / A).write_text("# A\n\nalpha\n", "utf-8")
    (box.vault / B).write_text("# B\n\nbeta\n", "utf-8")


def test_a_frontmatter_fill_a_person_saved_over_is_not_counted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    _hand_notes(box)
    _saved_meanwhile(monkeypatch, box, "make_plan", A)
    env = full_sweep(box.ctx(), apply=True)
    assert box.read(A) == "# A\n\nalpha\n" + PERSON  # left as the person saved it
    assert [f.path for f in env.data.frontmatter] == [B]
    assert [e.slug for e in env.data.entities_added] == ["a", "b"]
    assert env.data.changes == 3
    assert box.entity("a").h == content_hash(box.read(A))  # the note as saved
    monkeypatch.undo()
    again = full_sweep(box.ctx(), apply=True)  # the refused fill, made now, counted now
    assert [f.path for f in again.data.frontmatter] == [A]
    assert full_sweep(box.ctx(), apply=True).data.changes == 0


def test_a_link_a_person_saved_over_is_not_counted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    _hand_notes(box)
    full_sweep(box.ctx(), apply=True)
    text = box.read(A)
    (box.vault / A).write_text(text + "\n## Related\n- [[b]]\n", "utf-8")
    _saved_meanwhile(monkeypatch, box, "make_plan", B)
    env = full_sweep(box.ctx(), apply=True)
    assert "[[a]]" not in box.read(B)
    assert env.data.links == ()
    assert [e.slug for e in env.data.entities_updated] == ["a", "b"]  # both saved anew
    assert env.data.changes == 2


def test_a_working_note_a_person_saved_meanwhile_is_not_counted_as_archived(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    assert box.capture("Deploy scratch", kind="working", body="Try blue.",
                       today="2026-02-01").ok  # expires 2026-02-15
    full_sweep(box.ctx(), apply=True)
    _saved_meanwhile(monkeypatch, box, "plan_decay", WORKING)
    env = full_sweep(box.ctx(), apply=True, decay=True)
    assert box.frontmatter(WORKING)["status"] == "active"
    assert _decay(env).working == () and _decay(env).changes == 0
    assert [e.slug for e in env.data.entities_updated] == ["deploy-scratch"]
    assert env.data.changes == 1
    assert "deploy-scratch.md was edited while the sweep wrote it" in " ".join(env.warnings)


def test_observations_left_in_a_preferences_note_saved_meanwhile_are_not_counted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    path = box.vault / PREFERENCES_PATH
    head = path.read_text("utf-8").partition("## Observations")[0]
    items = [f"- 2026-01-{i + 1:02d}: observation {i}" for i in range(32)]
    path.write_text(head + "## Observations\n\n" + "\n".join(items) + "\n", "utf-8")
    full_sweep(box.ctx(), apply=True)
    _saved_meanwhile(monkeypatch, box, "plan_decay", PREFERENCES_PATH)
    env = full_sweep(box.ctx(), apply=True, decay=True)
    assert "- 2026-01-01: observation 0\n" in box.read(PREFERENCES_PATH)  # not moved
    assert _decay(env).observations == () and _decay(env).changes == 0
    monkeypatch.undo()
    again = full_sweep(box.ctx(), apply=True, decay=True)  # moved now, counted once
    assert [o.count for o in _decay(again).observations] == [2]
    assert "- 2026-01-01: observation 0\n" not in box.read(PREFERENCES_PATH)


def test_a_rerun_on_the_unchanged_vault_reports_no_change(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    _hand_notes(box)
    assert box.capture("Deploy scratch", kind="working", body="Try blue.",
                       today="2026-02-01").ok
    first = full_sweep(box.ctx(), apply=True, decay=True)
    assert first.data.changes > 0
    again = full_sweep(box.ctx(), apply=True, decay=True)
    assert again.data.changes == 0 and again.action == "unchanged"
    assert "0 changes made" in again.message
