"""``habitat status`` (issue 18 item 6): active agents, pending approvals, patterns per
status, the last digest; read only; over the CLI and MCP."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

import pytest

from plugins.habitat.digest_note import write_digest
from plugins.habitat.loom import Loom
from plugins.habitat.paths import habitat_dir, loom_dir
from plugins.habitat.patterns import PATTERNS_FILE, pattern_store
from plugins.habitat.patterns_ops import show_pattern
from plugins.habitat.patterns_scan import scan
from plugins.habitat.record import Record
from plugins.habitat.status import habitat_status
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.mcp_kit import call, make_server, with_client
from tests.test_habitat_detect import NOW, ctx_of, seeded
from tests.test_habitat_digest import FakeLearning, fake_learnings


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    return seeded(tmp_path)


def test_active_agents_are_those_recorded_in_the_window(box: VaultBox) -> None:
    ctx = ctx_of(box)
    Loom(loom_dir(ctx)).append([
        Record.new(ts=_dt.datetime(2026, 2, 27, 9, 0), kind="prompt", agent_id="agent-old",
                   session_id="s-old", text="long ago"),
        Record.new(ts=_dt.datetime(2026, 2, 28, 13, 0), kind="prompt", agent_id="agent-c",
                   session_id="s-c", text="yesterday afternoon")])
    env = habitat_status(ctx)
    rows = [(a.agent_id, a.sessions, a.records, a.tool_errors, a.last_ts[:19])
            for a in env.data.agents]
    assert rows == [("agent-a", 2, 15, 3, "2026-03-01T09:00:23"),
                    ("agent-b", 1, 8, 0, "2026-03-01T09:00:16"),
                    ("agent-c", 1, 1, 0, "2026-02-28T13:00:00")]
    assert [a.agent_id for a in habitat_status(ctx, hours=3).data.agents] == [
        "agent-a", "agent-b"]
    assert env.data.since == "2026-02-28T12:00:00"


def test_status_counts_approvals_patterns_and_names_the_last_digest(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_learnings(monkeypatch, box, [FakeLearning("l-1", "a"), FakeLearning("l-2", "b"),
                                      FakeLearning("l-3", "c", state="rejected")])
    scan(ctx_of(box))
    loop = next(p for p in pattern_store(ctx_of(box)).list() if p.kind == "stuck_loop")
    show_pattern(ctx_of(box), loop.id, status="actionable", note="it hangs deploys")
    write_digest(ctx_of(box), box.ctx().today())
    env = habitat_status(ctx_of(box, "2026-03-01T20:00:00"))
    assert env.data.pending_approvals == 2
    assert env.data.patterns == {"monitoring": 1, "actionable": 1, "proposed_fix": 0,
                                 "fixed": 0, "dismissed": 0}
    assert [p.id for p in env.data.actionable] == [loop.id]
    assert env.data.last_digest is not None
    assert (env.data.last_digest.date, env.data.last_digest.path) == (
        "2026-03-01", "_agent/memory/episodic/habitat-digest-2026-03-01.md")
    assert env.message == ("2 agent(s) active in the last 24 h, 2 learning(s) to approve, "
                           "1 actionable pattern(s)")


def test_an_empty_habitat_reads_as_empty_and_creates_nothing(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    env = habitat_status(ctx_of(box))
    assert env.data.agents == () and env.data.pending_approvals == 0
    assert set(env.data.patterns.values()) == {0} and env.data.last_digest is None
    assert not (habitat_dir(box.ctx()) / PATTERNS_FILE).exists()


def test_a_damaged_digest_mark_is_no_last_digest(box: VaultBox) -> None:
    folder = habitat_dir(box.ctx())
    folder.mkdir(parents=True, exist_ok=True)
    for junk in (b"\xff\xfe not json", b'{"date": 3}', b"[]"):
        (folder / "digest.json").write_bytes(junk)
        assert habitat_status(ctx_of(box)).data.last_digest is None


def test_cli_and_mcp_status(box: VaultBox, capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in box.env(ECHO_NOW=NOW).items():
        monkeypatch.setenv(key, value)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    done = run_main(["habitat", "status", *base], capsys, monkeypatch)
    assert done.code == 0, done.err
    assert "agent-a: 2 session(s), 15 record(s), 3 failed call(s)" in done.out
    assert "last digest: none" in done.out
    server = make_server(box, env=box.env(ECHO_NOW=NOW))

    async def body(client: Any) -> None:
        failed, data, _ = await call(client, "echo_habitat_status", hours=1)
        assert not failed and data["agents"] == []
        failed, data, _ = await call(client, "echo_habitat_status", hours=0)
        assert failed

    try:
        with_client(server, body)
    finally:
        server.runner.close()


def test_a_damaged_learnings_store_is_reported_not_fatal(box: VaultBox) -> None:
    folder = habitat_dir(box.ctx())
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "learnings.sqlite").write_bytes(b"not a database at all" * 100)
    env = habitat_status(ctx_of(box))
    assert env.ok and env.data.pending_approvals == 0
    assert [p.startswith("learnings not read:") for p in env.data.problems] == [True]
    digest = write_digest(ctx_of(box), box.ctx().today())
    assert "## Not read" in box.read(digest.data.path)
