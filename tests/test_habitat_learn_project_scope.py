"""The learn side of project-scoped insights (tester finding: an insight learned in
``proj/alphaproj`` was injected in a session of ``proj/staging-deploy``): ``habitat learn``
records the project it runs in (``--project`` names another, ``--project ''`` none; run
in ``$HOME`` or above it: none), a learning reinforced from another project becomes one
for every project, ``approve`` scopes the insight note to the learner's project (not the
approver's folder) and ``habitat learnings`` shows it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from plugins.habitat.insight_context import HEADER, select_insights
from plugins.habitat.learnings_ops import approve, learned_in, open_store, store_learning
from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun, run_main
from tests.hook_kit import context_of, hook_env, payload, run_hook
from tests.insight_project_kit import ALPHA, SHARED, repo

NOW = {"ECHO_TODAY": "2026-12-07", "ECHO_NOW": "2026-12-07T10:00:00"}


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path / "box").init()


def cli(box: VaultBox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        cwd: Path, *args: str) -> CliRun:
    """``echo-memory habitat <args> --vault V --state-dir S`` run in ``cwd``."""
    for key in [k for k in os.environ if k.startswith("ECHO_") and k != "ECHO_PLUGIN_DISTS"]:
        monkeypatch.delenv(key)
    for key, value in box.env(**NOW).items():
        monkeypatch.setenv(key, value)
    cwd.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(cwd)
    words = ["habitat", args[0], "--vault", str(box.vault), "--state-dir", str(box.state),
             *args[1:]]
    return run_main(words, capsys, monkeypatch)


def learn(box: VaultBox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
          cwd: Path, text: str, *more: str) -> dict[str, Any]:
    done = cli(box, monkeypatch, capsys, cwd, "learn", text, "--json", *more)
    assert done.code == 0, done.err
    learning: dict[str, Any] = json.loads(done.out)["learning"]
    return learning


def test_learn_records_the_project_it_runs_in_and_approve_scopes_the_note(
        box: VaultBox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    alpha = learn(box, monkeypatch, capsys, repo(tmp_path, "alphaproj"), ALPHA)
    assert alpha["project"] == "alphaproj"
    assert open_store(box.ctx(**NOW)).get(alpha["id"]).project == "alphaproj"  # type: ignore[union-attr]
    # approved from another project's folder: the note names the learner's project
    staging = repo(tmp_path, "staging-deploy")
    done = cli(box, monkeypatch, capsys, staging, "approve", alpha["id"], "--json")
    assert done.code == 0, done.err
    path = json.loads(done.out)["insight_path"]
    assert box.frontmatter(path)["project"] == "alphaproj"
    ctx = box.ctx(**NOW)
    assert alpha["id"] not in select_insights(ctx, cwd=str(staging),
                                              prompt="staging host deploy").text
    assert alpha["id"] in select_insights(box.ctx(**NOW), cwd=str(repo(tmp_path, "alphaproj")),
                                          prompt="staging host deploy").text


def test_the_testers_session_start_in_another_project_gets_no_alphaproj_secret(
        box: VaultBox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    alpha = learn(box, monkeypatch, capsys, repo(tmp_path, "alphaproj"), ALPHA)
    shared = learn(box, monkeypatch, capsys, tmp_path, SHARED,
                   "--project", "")
    for learning in (alpha, shared):
        assert approve(box.ctx(**NOW), learning["id"]).ok
    staging = repo(tmp_path, "staging-deploy")
    proc = run_hook("SessionStart", payload("SessionStart", "s-new", None, staging,
                                            source="startup"), hook_env(box, **NOW), staging)
    assert proc.returncode == 0, proc.stderr
    block = context_of(proc.stdout, "SessionStart")
    assert HEADER in block and shared["id"] in block
    assert alpha["id"] not in block and "10.1.2.3" not in block


def test_an_explicit_project_wins_and_an_empty_one_means_every_project(
        box: VaultBox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    here = repo(tmp_path, "alphaproj")
    named = learn(box, monkeypatch, capsys, here, "Beta builds need Java 21", "--project",
                  " betaproj ")
    assert named["project"] == "betaproj"
    none = learn(box, monkeypatch, capsys, here, "Check the changelog before a release",
                 "--project", "")
    assert none["project"] == ""


def test_learn_in_home_or_above_records_no_project(
        box: VaultBox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert learn(box, monkeypatch, capsys, box.home, "Coffee first, then code")["project"] == ""
    assert learn(box, monkeypatch, capsys, box.home.parent,
                 "Lunch at noon keeps the afternoon calm")["project"] == ""
    assert learn(box, monkeypatch, capsys, box.home / "notes",
                 "Notes folder holds drafts")["project"] == "notes"
    home = str(tmp_path / "h")
    assert (learned_in(home, home), learned_in("/", home), learned_in(str(tmp_path), home)) == (
        "", "", "")
    assert learned_in(str(repo(tmp_path, "gamma")), home) == "gamma"


def test_reinforced_from_another_project_it_becomes_global(
        box: VaultBox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    first = learn(box, monkeypatch, capsys, repo(tmp_path, "alphaproj"),
                  "Run the tests with pytest -n 2")
    same = learn(box, monkeypatch, capsys, repo(tmp_path, "AlphaProj"),
                 "run the tests with pytest -n 2!")
    assert (same["id"], same["recurrence"], same["project"]) == (first["id"], 2, "alphaproj")
    unscoped = learn(box, monkeypatch, capsys, repo(tmp_path, "x"),
                     "Run the tests with pytest -n 2", "--project", "")
    assert (unscoped["recurrence"], unscoped["project"]) == (3, "alphaproj")
    done = cli(box, monkeypatch, capsys, repo(tmp_path, "betaproj"), "learn",
               "Run the tests with pytest -n 2.")
    assert done.code == 0, done.err
    assert "every project" in done.out
    assert open_store(box.ctx(**NOW)).get(first["id"]).project == ""  # type: ignore[union-attr]


def test_store_learning_takes_the_project_and_redacts_it(box: VaultBox) -> None:
    ctx = box.ctx(**NOW)
    assert store_learning(ctx, "Plain library call").data.learning.project == ""
    named = store_learning(ctx, "Named library call", project="  alphaproj ").data
    assert named.learning.project == "alphaproj"
    secret = store_learning(ctx, "Odd project name",
                            project="ghp_abcdefghijklmnopqrstuvwxyz0123456789").data
    assert "ghp_" not in secret.learning.project and secret.redacted


def test_habitat_learnings_shows_the_project(
        box: VaultBox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    alpha = learn(box, monkeypatch, capsys, repo(tmp_path, "alphaproj"), ALPHA)
    other = learn(box, monkeypatch, capsys, box.home, "Coffee first, then code")
    done = cli(box, monkeypatch, capsys, box.home, "learnings")
    assert done.code == 0, done.err
    lines = {line.split()[0]: line for line in done.out.splitlines()
             if line and not line.startswith(" ")}
    assert "project alphaproj" in lines[alpha["id"]]
    assert "every project" in lines[other["id"]]
    listed = cli(box, monkeypatch, capsys, box.home, "learnings", "--json")
    rows = {x["id"]: x["project"] for x in json.loads(listed.out)["learnings"]}
    assert rows == {alpha["id"]: "alphaproj", other["id"]: ""}


def test_over_mcp_the_agent_names_the_project(box: VaultBox) -> None:
    """The MCP server's folder is not the agent's: a learning is scoped only to the
    ``project`` the agent gives."""
    from tests.mcp_kit import call, make_server, with_client

    server = make_server(box)
    try:
        async def body(client: Any) -> tuple[Any, Any]:
            named = await call(client, "echo_store_learning", content=ALPHA,
                               project="alphaproj")
            unnamed = await call(client, "echo_store_learning", content=SHARED)
            return named, unnamed

        named, unnamed = with_client(server, body)
    finally:
        server.runner.close()
    assert not named[0] and named[1]["learning"]["project"] == "alphaproj"
    assert not unnamed[0] and unnamed[1]["learning"]["project"] == ""
