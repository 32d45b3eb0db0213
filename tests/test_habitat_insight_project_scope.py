"""An insight recorded with a project is given only to sessions of that project (tester
finding: an insight learned in ``alphaproj`` was injected in ``staging-deploy`` because
they shared words); insights that name no project (every older one) go to every project.
Also: approving again empties an old rejection reason, and a redacted secret leaves no
trace in the insight's file name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from echo_core import invoke
from plugins.habitat.insight_context import HEADER, select_insights
from plugins.habitat.insight_notes import INSIGHT_FOLDER, write_insight
from plugins.habitat.insight_ranker import rank_insights
from plugins.habitat.insight_sync import sync_insights
from plugins.habitat.learnings_ops import approve, open_store, reject, store_learning
from tests.capture_kit import VaultBox
from tests.hook_kit import context_of, hook_env, payload, run_hook
from tests.insight_project_kit import ALPHA, SHARED, repo

NOW = {"ECHO_TODAY": "2026-12-07", "ECHO_NOW": "2026-12-07T10:00:00+00:00"}


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path / "box").init()


def approved_in(box: VaultBox, text: str, project: str = "") -> tuple[str, str]:
    """``text`` learned and approved as ``approve`` does, its note scoped to ``project``:
    (learning id, note path)."""
    ctx = box.ctx(**NOW)
    learning = store_learning(ctx, text, agent_id="agent-a", session_id="s-1").data.learning
    store = open_store(ctx)
    path, queued = write_insight(ctx, learning, store.provenance(learning.id), "approved",
                                 project=project)
    assert not queued
    store.decide(learning.id, "approved", now=ctx.now(), why="approved", insight_path=path,
                 note_status="approved")
    return learning.id, path


def start(box: VaultBox, cwd: Path) -> str:
    proc = run_hook("SessionStart", payload("SessionStart", "s-new", None, cwd, source="startup"),
                    hook_env(box, **NOW), cwd)
    assert proc.returncode == 0, proc.stderr
    return context_of(proc.stdout, "SessionStart")


def test_the_note_records_the_project_it_was_learned_in(box: VaultBox) -> None:
    _, path = approved_in(box, ALPHA, "alphaproj")
    assert box.frontmatter(path)["project"] == "alphaproj"
    assert "Only sessions of project alphaproj get it" in box.read(path)
    _, unscoped = approved_in(box, SHARED)
    assert "project" not in box.frontmatter(unscoped)


def test_another_projects_insight_is_not_injected_at_session_start(
        box: VaultBox, tmp_path: Path) -> None:
    alpha_id, _ = approved_in(box, ALPHA, "alphaproj")
    shared_id, _ = approved_in(box, SHARED)  # no project: an older insight, for everyone
    staging = start(box, repo(tmp_path, "staging-deploy"))
    assert alpha_id not in staging and "10.1.2.3" not in staging
    assert HEADER in staging and shared_id in staging
    assert alpha_id in start(box, repo(tmp_path, "alphaproj"))


def test_a_person_may_change_or_drop_the_project(box: VaultBox, tmp_path: Path) -> None:
    alpha_id, path = approved_in(box, ALPHA, "alphaproj")
    staging = str(repo(tmp_path, "staging-deploy"))
    ctx = box.ctx(**NOW)
    assert alpha_id not in select_insights(ctx, cwd=staging).text
    assert invoke(ctx, "fm", {"path": path, "key": "project",
                              "value": ["alphaproj", "Staging-Deploy"]}).ok
    assert alpha_id in select_insights(box.ctx(**NOW), cwd=staging).text
    note = box.vault / path
    note.write_text(re.sub(r"(?m)^project:.*\n", "", note.read_text("utf-8")), encoding="utf-8")
    assert "project" not in box.frontmatter(path)
    assert alpha_id in select_insights(box.ctx(**NOW), cwd=str(tmp_path / "elsewhere"),
                                       prompt="the staging host").text


def test_a_situation_without_a_project_gets_only_insights_of_none(box: VaultBox) -> None:
    alpha_id, _ = approved_in(box, ALPHA, "alphaproj")
    shared_id, _ = approved_in(box, SHARED)
    result = select_insights(box.ctx(**NOW), prompt="staging deploy host")
    assert shared_id in result.text and alpha_id not in result.text
    scoped = select_insights(box.ctx(**NOW), project="ALPHAPROJ", prompt="staging deploy")
    assert alpha_id in scoped.text


def test_other_projects_insights_do_not_crowd_this_ones_out(box: VaultBox) -> None:
    for n in range(3):  # better matches, all of another project
        approved_in(box, f"Staging deploy host rule {n} of the other team.", "betaproj")
    mine, _ = approved_in(box, "The staging wiki page lists the owners.", "alphaproj")
    ctx = box.ctx(**NOW)
    store = open_store(ctx)
    notes = sync_insights(ctx, store).notes
    query = "staging deploy host"
    assert len(rank_insights(ctx, store, notes, query, 2)) == 2  # both of betaproj
    hits = rank_insights(ctx, store, notes, query, 2, "alphaproj")
    assert [note.learning_id for note, _ in hits] == [mine]


def test_approving_again_clears_the_old_rejection_reason(box: VaultBox) -> None:
    ctx = box.ctx(**NOW)
    learning = store_learning(ctx, "Pin numpy below 2 for the legacy stack").data.learning
    path = approve(ctx, learning.id).data.insight_path
    assert reject(box.ctx(**NOW), learning.id, "numpy 2 works now").ok
    assert box.frontmatter(path)["reason"] == "numpy 2 works now"
    assert approve(box.ctx(**NOW), learning.id).ok
    front = box.frontmatter(path)
    assert front["status"] == "approved" and not front.get("reason")
    assert "numpy 2 works now" not in box.read(path)
    assert reject(box.ctx(**NOW), learning.id, "broke the image build").ok
    assert box.frontmatter(path)["reason"] == "broke the image build"


def test_the_file_name_leaves_out_redaction_markers(box: VaultBox) -> None:
    ctx = box.ctx(**NOW)
    stored = store_learning(ctx, "Use token ghp_abcdefghijklmnopqrstuvwxyz0123456789 for "
                                 "the CI mirror")
    assert stored.data.redacted, "the token was not recognised as a secret"
    path = approve(ctx, stored.data.learning.id).data.insight_path
    assert path == f"{INSIGHT_FOLDER}/use-token-for-the-ci-mirror.md"
    assert "[REDACTED:" in box.read(path) and "ghp_" not in box.read(path)
    only = store_learning(box.ctx(**NOW), "ghp_zyxwvutsrqponmlkjihgfedcba9876543210").data
    only_path = approve(box.ctx(**NOW), only.learning.id).data.insight_path
    assert only_path == f"{INSIGHT_FOLDER}/insight-{only.learning.id}.md"
