"""Detect on what the real capture points write: Claude Code sessions driven through the
hook recorder (``hook_record_run.py``, as the built plugin runs it), then scanned; and
the digest and status reading the real learnings store."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

import pytest

from plugins.habitat.digest_note import write_digest
from plugins.habitat.patterns import pattern_store
from plugins.habitat.patterns_ops import flag_turn
from plugins.habitat.patterns_scan import scan
from plugins.habitat.status import habitat_status
from tests.capture_kit import VaultBox
from tests.habitat_record_kit import box_at, hook_env, loom_json, loom_of, payload, run_recorder

LATER = {"ECHO_NOW": "2026-03-01T15:00:00", "ECHO_TODAY": "2026-03-01"}


def _drive(box: VaultBox, session: str, events: list[tuple[str, dict[str, Any]]]) -> None:
    for event, fields in events:
        proc = run_recorder(event, payload(session, **fields), hook_env(box))
        assert proc.returncode == 0 and proc.stdout == b"", proc.stderr


def _bash(command: str, *, error: str = "", stdout: str = "") -> tuple[str, dict[str, Any]]:
    fields: dict[str, Any] = {"tool_name": "Bash", "tool_input": {"command": command},
                              "tool_use_id": f"tu-{command}"}
    if error:
        return "PostToolUseFailure", {**fields, "error": error}
    return "PostToolUse", {**fields, "tool_response": {"stdout": stdout, "stderr": "",
                                                       "interrupted": False}}


def _session(prompt: str, calls: list[tuple[str, dict[str, Any]]],
             reply: str) -> list[tuple[str, dict[str, Any]]]:
    return [("SessionStart", {"source": "startup"}), ("UserPromptSubmit", {"prompt": prompt}),
            *calls, ("Stop", {"stop_hook_active": False, "last_assistant_message": reply}),
            ("SessionEnd", {"reason": "prompt_input_exit"})]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> VaultBox:
    box = box_at(tmp_path_factory.mktemp("recorded"))
    _drive(box, "sess-errors", _session("run the test suite", [
        _bash("pytest -q", error="ModuleNotFoundError: No module named 'foo'"),
        _bash("pip install foo", error="ERROR: No matching distribution found for foo"),
        _bash("python -m pytest -x", error="ModuleNotFoundError: No module named 'foo'"),
        _bash("cat pyproject.toml", stdout="dependencies = ['foo-client']")],
        "The package is foo-client."))
    _drive(box, "sess-loop", _session("wait for the deploy", [
        _bash("kubectl rollout status deploy/web", stdout="Waiting: 1 of 3 updated")] * 4,
        "The rollout is stuck."))
    _drive(box, "sess-clean", _session("add a docstring", [
        _bash("pytest -q tests/test_utils.py", stdout="3 passed")], "Done."))
    return box


def _ids(box: VaultBox, session: str, kind: str, *, error: bool | None = None) -> list[str]:
    return [r["id"] for r in loom_json(loom_of(box.ctx())) if r["session_id"] == session
            and r["kind"] == kind and (error is None or r["is_error"] == error)]


def test_recorded_sessions_give_exactly_two_patterns_on_the_right_records(
        recorded: VaultBox) -> None:
    ctx = recorded.ctx(**LATER)
    summary = scan(ctx)
    assert summary.found == {"error_streak": 1, "stuck_loop": 1}
    patterns = {p.kind: p for p in pattern_store(ctx).list()}
    assert set(patterns) == {"error_streak", "stuck_loop"}
    assert patterns["error_streak"].evidence == tuple(
        sorted(_ids(recorded, "sess-errors", "tool", error=True)))
    assert patterns["stuck_loop"].evidence == tuple(sorted(_ids(recorded, "sess-loop", "tool")))
    again = scan(recorded.ctx(**LATER))
    assert (again.new_patterns, again.new_occurrences, again.new_evidence) == ((), 0, 0)
    env = flag_turn(recorded.ctx(**LATER), "sess-loop", "1", "should stop after two polls")
    [prompt] = _ids(recorded, "sess-loop", "prompt")
    loop = pattern_store(ctx).get(env.data.pattern_id)
    assert loop is not None and loop.kind == "stuck_loop"
    assert {prompt, env.data.flag_id} <= set(loop.evidence) and loop.flags == 1


def test_the_digest_and_status_read_the_real_learnings_store(tmp_path: Path) -> None:
    from plugins.habitat.learnings import LearningStore
    from plugins.habitat.paths import habitat_dir

    box = box_at(tmp_path)
    store = LearningStore(habitat_dir(box.ctx()) / "learnings.sqlite")
    now = _dt.datetime(2026, 3, 1, 9, 0)
    for n, agent in enumerate(("agent-a", "agent-b", "agent-a")):
        store.store("Run uv sync before the tests", type="learning", tags=("python",),
                    agent_id=agent, session_id=f"s-{n}", rationale="tests failed without it",
                    now=now + _dt.timedelta(minutes=n))
    store.store("The staging VPN drops after 8 hours", type="finding", tags=(),
                agent_id="agent-b", session_id="s-9", rationale="seen twice", now=now)
    ctx = box.ctx(**LATER)
    env = write_digest(ctx, ctx.today())
    learnings = [(x.content, x.recurrence) for x in env.data.digest.learnings]
    assert learnings == [("Run uv sync before the tests", 3),
                         ("The staging VPN drops after 8 hours", 1)]
    assert [(s.source, s.why) for s in env.data.digest.suggested] == [
        ("learning", "learned 3 times; approve it")]
    assert "x3, from agent-a: Run uv sync before the tests" in box.read(env.data.path)
    assert habitat_status(ctx).data.pending_approvals == 2
