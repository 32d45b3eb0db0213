"""session-end (SPEC §4.3, §4.4): validation before any write, a dry run that writes
nothing, the five artefacts of an apply in order, the heartbeat as the commit marker,
idempotent re-apply and the CLI - checked on the files in tmp_path vaults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import echo_core.ops.session_end as session_end_module
from echo_core.errors import EchoError, ExitCode
from echo_core.hookspecs import hookimpl
from echo_core.ops.load import HEARTBEAT_PATH, load
from echo_core.ops.session_end import SessionBundle, session_end
from tests.capture_kit import VaultBox, section
from tests.conftest import run_cli
from tests.session_end_kit import vantage_box  # noqa: F401 - fixture box

LOG_PATH = "_agent/sessions/2026-03-01-0930-recall-index.md"
NOW = {"ECHO_NOW": "2026-03-01T09:30:00"}
LOG_BODY = ("## Goal\nShip the recall index\n\n## Decisions Made\n- BM25 over embeddings\n\n"
            "## Open Threads\n- tune k1\n\n## Suggested Next Step\nRun the eval")


def bundle(**changes: Any) -> dict[str, Any]:
    """A bundle using every key: proposals that create, update, go to the inbox, gate."""
    raw: dict[str, Any] = {
        "slug": "recall-index",
        "log_body": LOG_BODY,
        "agent_log_line": "- 2026-03-01: shipped the recall index",
        "scope": "Recall is done; next the MCP server",
        "reflect": [
            {"title": "Operator prefers pytest", "kind": "semantic",
             "body": "Use pytest, never unittest.", "tags": ["testing"], "confidence": 0.9},
            {"title": "Vantage Systems", "kind": "company", "body": "Renewal is in May.",
             "confidence": 0.8},
            {"title": "Maybe try tantivy", "kind": "concept", "body": "Could be faster.",
             "confidence": 0.4},
            {"title": "Vantage Systems Inc", "kind": "company", "body": "dup",
             "confidence": 0.95},
        ],
    }
    raw.update(changes)
    return raw


def _steps(result: Any) -> dict[str, Any]:
    return {step.artefact: step for step in result.steps}


# --- dry run ------------------------------------------------------------------------

def test_dry_run_previews_every_step_and_writes_nothing(box: VaultBox) -> None:
    before = box.tree_digest()
    env = session_end(box.ctx(**NOW), bundle(), apply=False)
    assert box.tree_digest() == before
    assert env.ok and env.action == "dry-run" and not env.data.applied
    assert [s.artefact for s in env.data.steps] == [
        "session-log", "agent-log", "reflect", "scope", "heartbeat"]
    steps = _steps(env.data)
    assert (steps["session-log"].path, steps["session-log"].action) == (LOG_PATH, "create")
    assert steps["agent-log"].path == "journal/daily/2026-03-01.md"
    assert steps["agent-log"].detail == "- 2026-03-01: shipped the recall index"
    assert steps["scope"].action == "set"
    assert steps["heartbeat"].detail == f"{LOG_PATH} @ 2026-03-01T09:30:00"
    assert [o.classification for o in env.data.reflect] == ["create", "update", "inbox", "gated"]
    assert env.data.reflect[3].candidates[0]["slug"] == "vantage-systems"


# --- apply --------------------------------------------------------------------------

class EndProbe:
    def __init__(self) -> None:
        self.bundles: list[Any] = []

    @hookimpl
    def on_session_end(self, bundle: Any, ctx: Any) -> None:
        self.bundles.append(bundle)


def test_apply_lands_all_five_artefacts(box: VaultBox) -> None:
    ctx = box.ctx(**NOW)
    probe = EndProbe()
    assert ctx.host.add("probe", probe)
    env = session_end(ctx, bundle(), apply=True)
    assert env.ok and env.action == "session-ended" and env.data.applied
    steps = _steps(env.data)
    # 1. the session log, from the template, log_body sections in place
    log = box.read(LOG_PATH)
    assert box.frontmatter(LOG_PATH)["type"] == "session"
    assert section(log, "Goal").strip() == "Ship the recall index"
    assert section(log, "Decisions Made").strip() == "- BM25 over embeddings"
    assert section(log, "Suggested Next Step").strip() == "Run the eval"
    assert steps["session-log"].action == "created"
    # 2. the agent-log line
    daily = box.read("journal/daily/2026-03-01.md")
    assert "- 2026-03-01: shipped the recall index" in section(daily, "Agent Log")
    assert steps["agent-log"].action == "appended"
    # 3. reflect outcomes
    outcomes = [(o.classification, o.path) for o in env.data.reflect]
    assert outcomes == [
        ("created", "_agent/memory/semantic/operator-prefers-pytest.md"),
        ("updated", "resources/companies/vantage-systems.md"),
        ("inbox", "inbox/captures/inbox.md"),
        ("gated", None)]
    assert "Renewal is in May." in box.read("resources/companies/vantage-systems.md")
    assert "- 2026-03-01: Maybe try tantivy — Could be faster." in box.read(
        "inbox/captures/inbox.md")
    assert not (box.vault / "resources/companies/vantage-systems-inc.md").exists()
    assert "gated (not saved): Vantage Systems Inc" in env.message
    # 4. scope
    context = box.read("_agent/context/current-context.md")
    assert section(context, "Scope").strip() == "Recall is done; next the MCP server"
    assert steps["scope"].action == "updated"
    # 5. heartbeat, and the event after it
    assert box.read(HEARTBEAT_PATH) == f"{LOG_PATH} @ 2026-03-01T09:30:00\n"
    assert steps["heartbeat"].action == "written"
    assert len(probe.bundles) == 1 and isinstance(probe.bundles[0], SessionBundle)
    assert box.leftovers() == []


def test_the_next_load_shows_the_committed_session(box: VaultBox) -> None:
    session_end(box.ctx(**NOW), bundle(), apply=True)
    digest = load(box.ctx(**NOW), brief=True).data.digest
    assert "## Last session: [[2026-03-01-0930-recall-index]]" in digest
    assert "### Goal\nShip the recall index" in digest
    assert "bootstrapped: 1 session logged" in digest
    assert "Recall is done; next the MCP server" in digest


def test_hhmm_comes_from_echo_now_and_the_default_agent_log_line(box: VaultBox) -> None:
    raw = bundle(reflect=[], scope=None)
    del raw["agent_log_line"], raw["scope"]
    env = session_end(box.ctx(ECHO_NOW="2026-03-01T17:05:00"), raw, apply=True)
    path = "_agent/sessions/2026-03-01-1705-recall-index.md"
    assert env.data.session_log == path and (box.vault / path).is_file()
    assert "- 2026-03-01: session [[2026-03-01-1705-recall-index]]" in box.read(
        "journal/daily/2026-03-01.md")
    assert _steps(env.data)["scope"].action == "skip"
    assert _steps(env.data)["reflect"].action == "skip"


def test_a_log_body_without_sections_goes_under_log(box: VaultBox) -> None:
    session_end(box.ctx(**NOW), bundle(log_body="Fixed the flaky test.\nAll green."),
                apply=True)
    log = box.read(LOG_PATH)
    assert section(log, "Log").strip() == "Fixed the flaky test.\nAll green."
    assert section(log, "Goal").strip() == ""
    digest = load(box.ctx(**NOW), brief=True).data.digest
    assert "### Log\nFixed the flaky test.\nAll green." in digest


# --- the heartbeat is the commit marker ---------------------------------------------

def _boom(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("injected failure")


def _reflect_fails_on_apply(ctx: Any, proposal: Any, *, apply: bool) -> Any:
    if apply:
        raise RuntimeError("injected failure")
    raise AssertionError("apply must not preview")


@pytest.mark.parametrize("target,replacement", [("set_scope", _boom),
                                                ("reflect_proposal", _reflect_fails_on_apply)])
def test_a_failure_after_the_session_log_keeps_the_previous_heartbeat(
    box: VaultBox, monkeypatch: pytest.MonkeyPatch, target: str, replacement: Any
) -> None:
    previous = (box.vault / HEARTBEAT_PATH).read_bytes()
    monkeypatch.setattr(session_end_module, target, replacement)
    with pytest.raises(RuntimeError, match="injected failure"):
        session_end(box.ctx(**NOW), bundle(), apply=True)
    assert (box.vault / LOG_PATH).is_file()  # written before the failure
    assert (box.vault / HEARTBEAT_PATH).read_bytes() == previous
    assert box.leftovers() == []  # the vault lock was released
    monkeypatch.undo()
    env = session_end(box.ctx(**NOW), bundle(), apply=True)  # the same bundle completes it
    assert _steps(env.data)["session-log"].action == "unchanged"
    assert box.read(HEARTBEAT_PATH).startswith(LOG_PATH + " @ ")


# --- idempotence and conflicts ------------------------------------------------------

def test_reapplying_the_same_bundle_is_idempotent_for_log_and_agent_log(box: VaultBox) -> None:
    session_end(box.ctx(**NOW), bundle(reflect=[]), apply=True)
    log, daily = box.read(LOG_PATH), box.read("journal/daily/2026-03-01.md")
    env = session_end(box.ctx(**NOW), bundle(reflect=[]), apply=True)
    steps = _steps(env.data)
    assert steps["session-log"].action == steps["agent-log"].action == "unchanged"
    assert steps["scope"].action == "unchanged"
    assert box.read(LOG_PATH) == log and box.read("journal/daily/2026-03-01.md") == daily


def test_a_different_log_at_the_same_path_is_refused_before_any_write(box: VaultBox) -> None:
    session_end(box.ctx(**NOW), bundle(reflect=[]), apply=True)
    before = box.tree_digest()
    for apply in (False, True):
        with pytest.raises(EchoError) as info:
            session_end(box.ctx(**NOW), bundle(log_body="something else"), apply=apply)
        assert info.value.code == ExitCode.USAGE and LOG_PATH in info.value.message
    assert box.tree_digest() == before


# --- validation ---------------------------------------------------------------------

def _proposal(**changes: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"title": "A fact", "body": "text", "confidence": 0.7}
    raw.update(changes)
    return {k: v for k, v in raw.items() if v is not ...}


@pytest.mark.parametrize("raw,field", [
    (bundle(slug="Recall Index"), "slug"),
    (bundle(slug="recall--index"), "slug"),
    (bundle(slug=7), "slug"),
    (bundle(log_body=""), "log_body"),
    ({"slug": "recall-index"}, "log_body"),
    (bundle(colour="red"), "colour"),
    (bundle(agent_log_line="two\nlines"), "agent_log_line"),
    (bundle(scope="x" * 2001), "scope"),
    (bundle(reflect={"title": "x"}), "reflect"),
    (bundle(reflect=[_proposal(), _proposal(), _proposal(confidence=1.5)]),
     "reflect[2].confidence"),
    (bundle(reflect=[_proposal(confidence=True)]), "reflect[0].confidence"),
    (bundle(reflect=[_proposal(confidence=...)]), "reflect[0].confidence"),
    (bundle(reflect=[_proposal(title=...)]), "reflect[0].title"),
    (bundle(reflect=[_proposal(body=...)]), "reflect[0].body"),
    (bundle(reflect=[_proposal(kind="planet")]), "reflect[0].kind"),
    (bundle(reflect=[_proposal(kind="area")]), "reflect[0].kind"),
    (bundle(reflect=[_proposal(date="March")]), "reflect[0].date"),
    (bundle(reflect=[_proposal(tags="x")]), "reflect[0].tags"),
    (bundle(reflect=[_proposal(status="active")]), "reflect[0].status"),
    (bundle(reflect=["just text"]), "reflect[0]"),
    (["not", "an", "object"], "bundle"),
])
def test_an_invalid_bundle_is_refused_naming_the_field(box: VaultBox, raw: Any,
                                                        field: str) -> None:
    before = box.tree_digest()
    with pytest.raises(EchoError) as info:
        session_end(box.ctx(**NOW), raw, apply=True)
    assert info.value.code == ExitCode.USAGE
    assert info.value.message.startswith(field), info.value.message
    assert box.tree_digest() == before


def test_an_uninitialised_vault_is_exit_78(tmp_path: Path) -> None:
    with pytest.raises(EchoError) as info:
        session_end(VaultBox(tmp_path).ctx(**NOW), bundle(), apply=False)
    assert info.value.code == ExitCode.NOT_CONFIGURED


# --- CLI ------------------------------------------------------------------------------

def test_cli_bad_slug_exits_2_naming_the_field(isolated_env: dict[str, str],
                                               tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle(slug="Bad Slug")), encoding="utf-8")
    before = box.tree_digest()
    out = run_cli(["session-end", str(path), "--apply", "--vault", str(box.vault)],
                  env=isolated_env)
    assert out.returncode == 2 and "slug" in out.stderr and "kebab-case" in out.stderr
    assert box.tree_digest() == before


def test_cli_apply_from_stdin_with_json(isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    out = run_cli(["session-end", "-", "--apply", "--json", "--vault", str(box.vault)],
                  env=isolated_env, stdin=json.dumps(bundle(reflect=[])).encode())
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["ok"] and data["applied"] and data["session_log"] == LOG_PATH
    assert [s["artefact"] for s in data["steps"]] == [
        "session-log", "agent-log", "reflect", "scope", "heartbeat"]
    assert box.read(HEARTBEAT_PATH) == f"{LOG_PATH} @ 2026-03-01T09:30:00\n"


def test_cli_preview_and_bad_json(isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    before = box.tree_digest()
    out = run_cli(["session-end", "-", "--vault", str(box.vault)], env=isolated_env,
                  stdin=json.dumps(bundle(reflect=[])).encode())
    assert out.returncode == 0 and "Preview (nothing written)" in out.stdout
    assert "--apply" in out.stdout
    bad = run_cli(["session-end", "-", "--vault", str(box.vault)], env=isolated_env,
                  stdin=b"{not json")
    assert bad.returncode == 2 and "not valid JSON" in bad.stderr
    assert box.tree_digest() == before


def test_cli_help_teaches_the_bundle(isolated_env: dict[str, str]) -> None:
    out = run_cli(["session-end", "--help"], env=isolated_env)
    assert out.returncode == 0
    assert '"slug": "recall-index"' in out.stdout and "--apply" in out.stdout
    assert "heartbeat" in out.stdout


def test_the_preview_of_two_proposals_for_one_new_note_says_what_apply_does(
        box: VaultBox) -> None:
    twice = bundle(reflect=[
        {"title": "Grace Hopper", "kind": "person", "body": "Wrote the first compiler.",
         "confidence": 0.9},
        {"title": "Grace Hopper", "kind": "person", "body": "Coined 'debugging'.",
         "confidence": 0.9}])
    before = box.tree_digest()
    preview = session_end(box.ctx(**NOW), twice, apply=False)
    assert box.tree_digest() == before
    applied = session_end(box.ctx(**NOW), twice, apply=True)
    said = [o.classification for o in preview.data.reflect]
    done = [o.classification for o in applied.data.reflect]
    assert said == ["create", "update"]
    assert done == ["created", "updated"]
