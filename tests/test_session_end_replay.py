"""session-end replayed later (a hook retry, an outbox replay): the same bundle applied
again a minute or more after the first run - completed, or killed half-way - writes
nothing twice: one session log, one agent-log line, each proposal once; a replay with one
more proposal adds only that one. A new session of the same slug with other content
still gets its own log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import echo_core.ops.session_end as session_end_module
from echo_core.ops.load import HEARTBEAT_PATH
from echo_core.ops.session_end import session_end
from tests.capture_kit import VaultBox, section
from tests.conftest import run_cli
from tests.session_end_kit import (
    PYTEST,
    RENEWAL,
    TANTIVY,
    vantage_box,  # noqa: F401 - fixture box
)

FIRST = {"ECHO_NOW": "2026-03-01T09:30:00"}
LATER = {"ECHO_NOW": "2026-03-01T09:31:00"}
LOG = "_agent/sessions/2026-03-01-0930-recall-index.md"
DAILY = "journal/daily/2026-03-01.md"
LOG_BODY = "## Goal\nShip recall\n\n## Decisions Made\n- BM25 ranking"


def bundle(*proposals: dict[str, Any], **changes: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"slug": "recall-index", "log_body": LOG_BODY,
                           "scope": "Recall is done", "reflect": list(proposals)}
    raw.update(changes)
    return raw


def _session_logs(box: VaultBox) -> list[str]:
    return sorted(p.name for p in (box.vault / "_agent/sessions").glob("2026-*.md"))


def _agent_log(box: VaultBox) -> list[str]:
    return [line for line in section(box.read(DAILY), "Agent Log").splitlines() if line]


def _steps(env: Any) -> dict[str, str]:
    return {step.artefact: step.action for step in env.data.steps}


def test_the_same_bundle_applied_a_minute_later_writes_nothing(box: VaultBox) -> None:
    raw = bundle(PYTEST, RENEWAL, TANTIVY)
    session_end(box.ctx(**FIRST), raw, apply=True)
    before = box.tree_digest()
    again = session_end(box.ctx(**LATER), raw, apply=True)
    assert box.tree_digest() == before
    assert again.data.session_log == LOG
    assert _steps(again) == {"session-log": "unchanged", "agent-log": "unchanged",
                             "reflect": "capture", "scope": "unchanged",
                             "heartbeat": "unchanged"}
    assert [o.classification for o in again.data.reflect] == ["unchanged"] * 3


def test_the_preview_of_a_replay_a_minute_later_says_unchanged(box: VaultBox) -> None:
    raw = bundle(PYTEST)
    session_end(box.ctx(**FIRST), raw, apply=True)
    preview = session_end(box.ctx(**LATER), raw, apply=False)
    assert preview.data.session_log == LOG
    steps = _steps(preview)
    assert (steps["session-log"], steps["agent-log"]) == ("unchanged", "unchanged")


def _fail_agent_log(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("killed")


def _fail_reflect(ctx: Any, proposal: Any, *, apply: bool) -> Any:
    raise RuntimeError("killed")


@pytest.mark.parametrize("target,failure", [("append_agent_log", _fail_agent_log),
                                            ("reflect_proposal", _fail_reflect),
                                            ("set_scope", _fail_agent_log)])
def test_a_replay_a_minute_after_a_run_killed_half_way_completes_it_once(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch, target: str, failure: Any) -> None:
    raw = bundle(PYTEST, RENEWAL)
    monkeypatch.setattr(session_end_module, target, failure)
    with pytest.raises(RuntimeError, match="killed"):
        session_end(box.ctx(**FIRST), raw, apply=True)
    monkeypatch.undo()
    env = session_end(box.ctx(**LATER), raw, apply=True)
    assert env.data.session_log == LOG and _session_logs(box) == [Path(LOG).name]
    log = _agent_log(box)
    assert log == list(dict.fromkeys(log))  # no line twice
    assert sum("[[2026-03-01-0930-recall-index]]" in line for line in log) == 1
    assert box.read("resources/companies/vantage-systems.md").count("Renewal is in May.") == 1
    assert section(box.read("_agent/context/current-context.md"), "Scope").strip() == (
        "Recall is done")
    assert box.read(HEARTBEAT_PATH) == f"{LOG} @ 2026-03-01T09:31:00\n"


def test_a_replay_with_one_proposal_added_writes_only_that_proposal(box: VaultBox) -> None:
    session_end(box.ctx(**FIRST), bundle(PYTEST), apply=True)
    log_before = _agent_log(box)
    env = session_end(box.ctx(**LATER), bundle(PYTEST, RENEWAL), apply=True)
    assert [o.classification for o in env.data.reflect] == ["unchanged", "updated"]
    assert _session_logs(box) == [Path(LOG).name]
    added = _agent_log(box)[len(log_before):]
    assert _agent_log(box)[:len(log_before)] == log_before
    assert added == ["- 2026-03-01: updated company [[vantage-systems]]"]


def test_a_later_session_of_the_same_slug_with_other_content_gets_its_own_log(
        box: VaultBox) -> None:
    session_end(box.ctx(**FIRST), bundle(), apply=True)
    env = session_end(box.ctx(**LATER), bundle(log_body="## Goal\nTune k1"), apply=True)
    later = "_agent/sessions/2026-03-01-0931-recall-index.md"
    assert env.data.session_log == later and _steps(env)["session-log"] == "created"
    assert _session_logs(box) == [Path(LOG).name, Path(later).name]
    assert sum("[[2026-03-01-0931-recall-index]]" in line for line in _agent_log(box)) == 1
    assert box.read(HEARTBEAT_PATH) == f"{later} @ 2026-03-01T09:31:00\n"


def test_cli_replay_a_minute_later_adds_no_log_and_no_agent_log_line(
        isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    raw = json.dumps(bundle(PYTEST, agent_log_line="shipped recall")).encode()
    for now in ("2026-03-01T09:30:00", "2026-03-01T09:31:00"):
        out = run_cli(["session-end", "-", "--apply", "--vault", str(box.vault)],
                      env={**isolated_env, "ECHO_NOW": now}, stdin=raw)
        assert out.returncode == 0, out.stderr
    assert _session_logs(box) == [Path(LOG).name]
    assert _agent_log(box).count("- shipped recall") == 1
