"""The habitat's daily digest (issue 18 item 6): a vault note of learnings to approve,
suggested insights, the day's patterns, batches and cross-agent connections; the same
day rewrites the same note; over MCP too."""

from __future__ import annotations

import sys
import types
from datetime import date
from pathlib import Path
from typing import Any

import attrs
import pytest

import plugins.habitat
from plugins.habitat.digest_note import digest_path, last_digest, write_digest
from plugins.habitat.loom import Loom
from plugins.habitat.paths import habitat_dir, loom_dir
from plugins.habitat.patterns_ops import flag_turn
from plugins.habitat.record import Record
from tests.capture_kit import VaultBox
from tests.mcp_kit import call, make_server, with_client
from tests.test_habitat_detect import NOW, STREAK, ctx_of, seeded

DAY = "2026-03-01"
NOTE = digest_path(DAY)


@attrs.frozen
class FakeLearning:
    """What the digest reads of a learning (``learnings.Learning``'s fields it uses)."""

    id: str
    content: str
    type: str = "learning"
    recurrence: int = 1
    agent_id: str = "agent-a"
    created: str = "2026-03-01T08:00:00"
    state: str = "pending"


def fake_learnings(monkeypatch: pytest.MonkeyPatch, box: VaultBox,
                   items: list[FakeLearning]) -> None:
    """A stand-in for the learn part's ``LearningStore`` holding ``items``."""

    class Store:
        def __init__(self, path: Path) -> None:
            self.path = path

        def list(self, state: str | None = None) -> list[FakeLearning]:
            return [x for x in items if state is None or x.state == state]

        def decay(self, today: object, now: object) -> list[object]:
            return []

    module = types.ModuleType("plugins.habitat.learnings")
    module.LearningStore = Store  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "plugins.habitat.learnings", module)
    monkeypatch.setattr(plugins.habitat, "learnings", module, raising=False)
    folder = habitat_dir(box.ctx())
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "learnings.sqlite").touch()


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    return seeded(tmp_path)


def test_the_digest_is_a_note_with_the_days_patterns_and_batches(box: VaultBox) -> None:
    env = write_digest(ctx_of(box), box.ctx(ECHO_TODAY=DAY).today())
    assert env.ok and env.action == "written" and env.data.path == NOTE
    text = box.read(NOTE)
    assert text.startswith("---\ntype: episodic\nstatus: active\ncreated: 2026-03-01\n"
                           "updated: 2026-03-01\ntags: [episodic, habitat, digest]\n---\n"
                           "# Habitat digest 2026-03-01\n")
    assert "## Patterns seen today (2)" in text
    assert "error streak: Bash — modulenotfounderror: no module named <s>" in text
    assert "- `b0001` 2/8: error_streak 1, stuck_loop 1" in text
    assert "## Learnings to approve (0)" in text and "Nothing waits for approval." in text
    assert env.data.scan is not None and env.data.scan.new_occurrences == 2
    assert last_digest(habitat_dir(box.ctx())) == {"date": DAY, "path": NOTE, "written": NOW}


def test_rerunning_the_same_day_rewrites_the_same_note(box: VaultBox) -> None:
    write_digest(ctx_of(box), box.ctx().today())
    first = (box.vault / NOTE).stat().st_mtime_ns, box.read(NOTE)
    again = write_digest(ctx_of(box, "2026-03-01T18:00:00"), box.ctx().today())
    assert again.action == "unchanged" and not again.data.written
    assert ((box.vault / NOTE).stat().st_mtime_ns, box.read(NOTE)) == first
    flag_turn(ctx_of(box), "s-errors", "1", "read the config first")
    later = write_digest(ctx_of(box, "2026-03-01T19:00:00"), box.ctx().today())
    assert later.action == "written" and later.data.path == NOTE
    assert "flagged x1" in box.read(NOTE)
    digests = sorted(p.name for p in (box.vault / NOTE).parent.glob("habitat-digest-*"))
    assert digests == ["habitat-digest-2026-03-01.md"]


def test_pending_learnings_and_recurring_or_flagged_patterns_are_suggested(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_learnings(monkeypatch, box, [
        FakeLearning("l-once", "uv sync before running tests"),
        FakeLearning("l-thrice", "the deploy needs VPN", recurrence=3, agent_id="agent-b"),
        FakeLearning("l-gone", "approved already", state="approved"),
    ])
    flag_turn(ctx_of(box), "s-clean", "1", "wrong docstring style")
    env = write_digest(ctx_of(box), box.ctx().today())
    data = env.data.digest
    assert [x.id for x in data.learnings] == ["l-thrice", "l-once"]
    assert [(s.source, s.id, s.why) for s in data.suggested] == [
        ("learning", "l-thrice", "learned 3 times; approve it"),
        ("pattern", data.suggested[1].id, "flagged 1 time(s)")]
    text = box.read(NOTE)
    assert "- `l-thrice` learning, x3, from agent-b: the deploy needs VPN" in text
    assert "Approve with `echo-memory habitat approve <id>`" in text
    assert "approved already" not in text


def test_a_past_days_digest_leaves_out_what_was_learned_or_first_seen_after_it(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_learnings(monkeypatch, box, [
        FakeLearning("l-then", "the deploy needs VPN", recurrence=3),
        FakeLearning("l-later", "pin the lockfile", recurrence=3, created="2026-03-02T09:00:00"),
    ])
    flag_turn(ctx_of(box), "s-clean", "1", "wrong docstring style")  # first seen 2026-03-01
    before = write_digest(ctx_of(box), date(2026, 2, 28), dry_run=True).data.digest
    assert before.learnings == () and before.suggested == ()
    on_the_day = write_digest(ctx_of(box), date(2026, 3, 1), dry_run=True).data.digest
    assert [x.id for x in on_the_day.learnings] == ["l-then"]
    assert [s.source for s in on_the_day.suggested] == ["learning", "pattern"]
    after = write_digest(ctx_of(box), date(2026, 3, 2), dry_run=True).data.digest
    assert [x.id for x in after.learnings] == ["l-then", "l-later"]


def test_a_pattern_recurring_three_times_is_suggested(tmp_path: Path) -> None:
    box = seeded(tmp_path)
    ctx = ctx_of(box)
    records = []
    for n in range(2):  # two more sessions failing the same way as s-errors
        t = ctx.now().replace(hour=10 + n)
        sid = f"s-again-{n}"
        records.append(Record.new(ts=t, kind="prompt", agent_id="agent-a", session_id=sid,
                                  text="run the tests"))
        for k in range(3):
            records.append(Record.new(ts=t.replace(minute=k + 1), kind="tool",
                                      agent_id="agent-a", session_id=sid,
                                      text=f'Bash {{"command": "pytest -q -k t{n}{k}"}}',
                                      result="ModuleNotFoundError: No module named 'foo'",
                                      is_error=True))
        records.append(Record.new(ts=t.replace(minute=9), kind="reply", agent_id="agent-a",
                                  session_id=sid, text="foo is missing"))
    Loom(loom_dir(ctx)).append(records)
    env = write_digest(ctx, ctx.today())
    streak = next(p for p in env.data.digest.patterns if p.kind == "error_streak")
    assert (streak.recurrence, streak.status) == (3, "actionable")
    assert [(s.source, s.id, s.why) for s in env.data.digest.suggested] == [
        ("pattern", streak.id, "recurred 3 times")]


def test_connections_link_records_of_two_agents_naming_one_entity(box: VaultBox) -> None:
    assert box.capture("Grace Hopper", kind="person", body="COBOL.").ok
    ctx = ctx_of(box)
    t = ctx.now()
    Loom(loom_dir(ctx)).append([
        Record.new(ts=t.replace(hour=10), kind="prompt", agent_id="agent-a",
                   session_id="s-1", text="ask Grace Hopper about the compiler"),
        Record.new(ts=t.replace(hour=11), kind="reply", agent_id="agent-b",
                   session_id="s-2", text="Grace Hopper wrote the first compiler",
                   tags=("compilers",)),
        Record.new(ts=t.replace(hour=11, minute=5), kind="note", agent_id="agent-a",
                   session_id="s-1", text="nothing named", tags=("Compilers",)),
        Record.new(ts=t.replace(hour=11, minute=6), kind="tool", agent_id="agent-c",
                   session_id="s-3", text="Grep Grace Hopper"),
    ])
    env = write_digest(ctx, ctx.today())
    found = {c.key: c for c in env.data.digest.connections}
    assert set(found) == {"entity:grace-hopper", "tag:compilers"}
    assert found["entity:grace-hopper"].agents == ("agent-a", "agent-b")
    assert len(found["entity:grace-hopper"].record_ids) == 2
    assert "- [[grace-hopper]]: agent-a, agent-b — 2 record(s)" in box.read(NOTE)


def test_secrets_and_markdown_in_learnings_do_not_reach_the_note_as_written(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    fake_learnings(monkeypatch, box, [
        FakeLearning("l-1", f"use key {key} for\n## Patterns seen today (99)\n---\nok"),
        FakeLearning("l-2", "x" * 100_000),
    ])
    write_digest(ctx_of(box), box.ctx().today())
    text = box.read(NOTE)
    assert key not in text and "[REDACTED:" in text
    assert text.count("\n## Patterns seen today") == 1 and text.count("\n---\n") == 1
    assert max(len(line) for line in text.splitlines()) < 300


def test_the_digest_is_in_the_graph_and_lints_clean(box: VaultBox) -> None:
    from echo_core.ops.lint.run import lint
    from echo_core.ops.resolve import resolve

    assert box.capture("Deploy notes", kind="concept", body="Blue/green.").ok  # daily note
    write_digest(ctx_of(box), box.ctx().today())
    assert "- [[2026-03-01]]" in box.read(NOTE)
    findings = [f for f in lint(box.ctx()).data.findings if f.path == NOTE]
    assert findings == []
    match = resolve(box.ctx(), "Habitat digest 2026-03-01").data
    assert match.path == NOTE
    next_day = write_digest(ctx_of(box, "2026-03-02T09:00:00"),
                            box.ctx(ECHO_TODAY="2026-03-02").today())
    assert "- [[habitat-digest-2026-03-01]]" in box.read(next_day.data.path)


def test_a_dry_run_scans_and_writes_nothing(box: VaultBox) -> None:
    env = write_digest(ctx_of(box), box.ctx().today(), dry_run=True)
    assert env.action == "dry-run" and env.data.scan is None and not env.data.written
    assert not (box.vault / NOTE).exists()
    assert last_digest(habitat_dir(box.ctx())) is None
    assert "# Habitat digest 2026-03-01" in env.data.text


def test_mcp_digest(box: VaultBox) -> None:
    server = make_server(box, env=box.env(ECHO_NOW=NOW))

    async def body(client: Any) -> None:
        failed, data, text = await call(client, "echo_habitat_digest")
        assert not failed and data["path"] == NOTE and data["written"], text
        assert "## Patterns seen today (2)" in text
        assert [p["evidence"] for p in data["digest"]["patterns"]
                if p["kind"] == "error_streak"] == [list(STREAK)]
        failed, data, _ = await call(client, "echo_habitat_digest", date="2026-3-1x")
        assert failed

    try:
        with_client(server, body)
    finally:
        server.runner.close()


def test_a_person_saving_the_digest_while_it_is_rewritten_finds_that_save_in_the_history(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.hand_edit_kit import saved_by_hand_at_first_fsync

    write_digest(ctx_of(box), box.ctx().today())
    flag_turn(ctx_of(box), "s-errors", "1", "read the config first")
    mine = box.read(NOTE) + "- my own note on today\n"
    saved_by_hand_at_first_fsync(monkeypatch, lambda: (box.vault / NOTE).write_text(
        mine, encoding="utf-8"), temp_of=Path(NOTE).name)
    later = write_digest(ctx_of(box, "2026-03-01T19:00:00"), box.ctx().today())
    assert later.action == "written" and "flagged x1" in box.read(NOTE)
    ctx = box.ctx()
    assert mine in [ctx.history.text(NOTE, v) for v in ctx.history.versions(NOTE)]
