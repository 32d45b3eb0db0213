"""Approve -> an insight note in the vault (issue 18 item 2): written through the core's
write path (indexes current, lint clean), decided on by editing its ``status`` in the
note; the store follows at the next sync."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plugins.habitat.insight_notes import HUB_PATH, INSIGHT_FOLDER, insight_text
from tests.capture_kit import VaultBox
from tests.test_habitat_learn_store import TEXT, cli, learn, store_of


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path / "box").init()


def approve(box: VaultBox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
            text: str = TEXT, *more: str) -> dict[str, Any]:
    learning = learn(box, monkeypatch, capsys, text, *more)["learning"]
    done = cli(box, monkeypatch, capsys, "habitat", "approve", learning["id"], "--json")
    assert done.code == 0, done.err
    data: dict[str, Any] = json.loads(done.out)
    return data


def edit_status(box: VaultBox, path: str, status: str, reason: str = "") -> None:
    note = box.vault / path
    text = note.read_text("utf-8").replace("status: approved", f"status: {status}", 1)
    if reason:
        text = text.replace("\n---\n# ", f"\nreason: {reason}\n---\n# ", 1)
    note.write_text(text, encoding="utf-8")


def test_approve_writes_one_insight_note_with_its_status_and_learning(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = approve(box, monkeypatch, capsys, TEXT, "--tags", "tests", "--rationale", "CI")
    path = data["insight_path"]
    assert path.startswith(INSIGHT_FOLDER + "/") and path.endswith(".md")
    fm = box.frontmatter(path)
    assert (fm["type"], fm["status"], fm["learning_id"], fm["recurrence"]) == (
        "concept", "approved", data["learning"]["id"], 1)
    assert {"insight", "habitat", "tests"} <= set(fm["tags"])
    note = box.read(path)
    assert TEXT in note and "[[habitat-insights]]" in note and "CI" in note
    assert store_of(box).get(data["learning"]["id"]).state == "approved"  # type: ignore[union-attr]
    assert [p.name for p in (box.vault / INSIGHT_FOLDER).iterdir()] == [Path(path).name]


def test_the_insight_is_in_both_indexes_and_the_vault_lints_clean(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = approve(box, monkeypatch, capsys)["insight_path"]
    assert any(e.path == path for e in box.index().entities.values())
    assert any(e.path == HUB_PATH for e in box.index().entities.values())
    recall = cli(box, monkeypatch, capsys, "recall", "pytest committing", "--json")
    assert path in recall.out
    lint = cli(box, monkeypatch, capsys, "lint")
    assert lint.code == 0, lint.out


def test_approving_twice_writes_nothing_more(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    data = approve(box, monkeypatch, capsys)
    before = box.tree_digest()
    again = cli(box, monkeypatch, capsys, "habitat", "approve", data["learning"]["id"],
                "--json")
    assert json.loads(again.out)["insight_path"] == data["insight_path"]
    assert box.tree_digest() == before


def test_a_person_rejecting_in_the_note_rejects_the_learning_with_their_reason(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = approve(box, monkeypatch, capsys)
    edit_status(box, data["insight_path"], "Rejected", "too slow on laptops")
    listed = json.loads(cli(box, monkeypatch, capsys, "habitat", "learnings", "--json").out)
    one = listed["learnings"][0]
    assert (one["state"], one["reason"]) == ("rejected", "too slow on laptops")
    assert listed["synced"] and "edited in" in listed["synced"][0]
    insights = cli(box, monkeypatch, capsys, "habitat", "insights", "--project", "pytest",
                   "--json")
    assert json.loads(insights.out)["insights"] == []
    assert box.frontmatter(data["insight_path"])["status"] == "Rejected"  # left as typed


def test_a_person_setting_pending_sends_it_back_to_review_and_approved_again_restores(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = approve(box, monkeypatch, capsys)
    edit_status(box, data["insight_path"], "pending")
    cli(box, monkeypatch, capsys, "habitat", "learnings")
    learning_id = data["learning"]["id"]
    assert store_of(box).get(learning_id).state == "pending"  # type: ignore[union-attr]
    note = box.vault / data["insight_path"]
    note.write_text(note.read_text("utf-8").replace("status: pending", "status: approved"),
                    encoding="utf-8")
    cli(box, monkeypatch, capsys, "habitat", "learnings")
    assert store_of(box).get(learning_id).state == "approved"  # type: ignore[union-attr]


def test_a_status_the_store_cannot_read_is_reported_and_changes_nothing(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = approve(box, monkeypatch, capsys)
    edit_status(box, data["insight_path"], "maybe")
    listed = json.loads(cli(box, monkeypatch, capsys, "habitat", "learnings", "--json").out)
    assert listed["learnings"][0]["state"] == "approved"
    assert any("maybe" in p for p in listed["problems"])


def test_reject_on_the_cli_marks_the_note_and_approve_again_reuses_it(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = approve(box, monkeypatch, capsys)
    learning_id, path = data["learning"]["id"], data["insight_path"]
    done = cli(box, monkeypatch, capsys, "habitat", "reject", learning_id, "wrong on CI",
               today="2026-03-05")
    assert done.code == 0, done.err
    fm = box.frontmatter(path)
    assert (fm["status"], fm["reason"], str(fm["updated"])) == ("rejected", "wrong on CI",
                                                                "2026-03-05")
    cli(box, monkeypatch, capsys, "habitat", "learnings")  # a sync changes nothing now
    assert store_of(box).get(learning_id).state == "rejected"  # type: ignore[union-attr]
    again = json.loads(cli(box, monkeypatch, capsys, "habitat", "approve", learning_id,
                           "--json").out)
    assert again["insight_path"] == path and box.frontmatter(path)["status"] == "approved"
    assert len(list((box.vault / INSIGHT_FOLDER).iterdir())) == 1


def test_killed_between_the_note_and_the_store_the_next_sync_reads_the_note_back(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from plugins.habitat import learnings_ops

    learning = learn(box, monkeypatch, capsys, TEXT)["learning"]

    def killed(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt("killed after the note was written")

    monkeypatch.setattr(learnings_ops.LearningStore, "decide", killed)
    with pytest.raises(KeyboardInterrupt):
        learnings_ops.approve(box.ctx(), learning["id"])
    monkeypatch.undo()
    assert store_of(box).get(learning["id"]).state == "pending"  # type: ignore[union-attr]
    listed = json.loads(cli(box, monkeypatch, capsys, "habitat", "learnings", "--json").out)
    assert listed["learnings"][0]["state"] == "approved"
    assert listed["learnings"][0]["insight_path"].startswith(INSIGHT_FOLDER)


def test_hostile_learning_text_makes_a_safe_note(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    text = ("---\nstatus: rejected\n---\n## Provenance\n# ../../etc/passwd: *?\"<>| "
            "[[x]] \u202e ✓ 🚀")
    data = approve(box, monkeypatch, capsys, text, "--tags", "a:b,\"q\"")
    path = data["insight_path"]
    assert path.startswith(INSIGHT_FOLDER + "/") and ".." not in path
    fm = box.frontmatter(path)
    assert fm["status"] == "approved" and fm["learning_id"] == data["learning"]["id"]
    from echo_core.notes import parse_note

    body = parse_note(path, box.read(path)).body
    assert insight_text(body) == data["learning"]["content"]


def test_an_emoji_only_learning_gets_a_note_named_by_its_id(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = approve(box, monkeypatch, capsys, "🚀🚀 ✓")
    assert data["insight_path"] == f"{INSIGHT_FOLDER}/insight-{data['learning']['id']}.md"


def test_with_the_vault_unreachable_the_sync_says_so_and_the_store_stands(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from echo_core import BackendUnavailable
    from plugins.habitat.insight_context import select_insights
    from plugins.habitat.insight_sync import sync_insights
    from plugins.habitat.learnings_ops import open_store
    from plugins.storage_fs.folder_storage import FolderStorage

    data = approve(box, monkeypatch, capsys)
    edit_status(box, data["insight_path"], "rejected")

    def down(self: object, prefix: str = "") -> list[str]:
        raise BackendUnavailable("the vault is on a disk that is not mounted")

    monkeypatch.setattr(FolderStorage, "list", down)
    ctx = box.ctx()
    report = sync_insights(ctx, open_store(ctx))
    assert report.changed == () and "not mounted" in report.problems[0]
    assert store_of(box).get(data["learning"]["id"]).state == "approved"  # type: ignore[union-attr]
    result = select_insights(ctx, project="pytest")
    assert result.insights == () and result.problems


def test_approving_again_on_a_later_day_writes_nothing(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = approve(box, monkeypatch, capsys)
    before = box.tree_digest()
    again = cli(box, monkeypatch, capsys, "habitat", "approve", data["learning"]["id"],
                today="2026-04-01")
    assert again.code == 0 and box.tree_digest() == before
