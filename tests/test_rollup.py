"""``rollup`` (seed S0 rollup data, SPEC §6.2 rollup_data): the ISO week or month holding
a day — sessions with their goals and decisions, decision notes, entities created and
updated, agent-log lines — read only, without reading notes untouched since the period."""

from __future__ import annotations

import datetime as _dt
import json
import os
from typing import Any

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.rollup import period_bounds, rollup
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.mcp_kit import call, make_server, with_client

SESSION = """---
type: session
---
# Session: rollup verb

## Goal
Ship the rollup verb

## Decisions Made
- Read frontmatter only when files changed
- Keep it read-only

## Open Threads
- none
"""
OLD_MTIME = _dt.datetime(2025, 1, 1, tzinfo=_dt.UTC).timestamp()


@pytest.mark.parametrize(("period", "day", "expected"), [
    ("week", "2026-03-01", ("2026-02-23", "2026-03-01", "2026-W09")),  # a Sunday
    ("week", "2026-02-23", ("2026-02-23", "2026-03-01", "2026-W09")),  # a Monday
    ("week", "2027-01-01", ("2026-12-28", "2027-01-03", "2026-W53")),  # ISO year != year
    ("month", "2024-02-10", ("2024-02-01", "2024-02-29", "2024-02")),  # leap year
    ("month", "2026-12-31", ("2026-12-01", "2026-12-31", "2026-12")),
])
def test_the_period_is_the_iso_week_or_calendar_month_holding_the_day(
        period: Any, day: str, expected: tuple[str, str, str]) -> None:
    start, end, label = period_bounds(period, _dt.date.fromisoformat(day))
    assert (start.isoformat(), end.isoformat(), label) == expected


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> VaultBox:
    """Captures across February 2026, a session log in week 9, a hand-written agent-log
    line, and 30 old notes whose files were last written in 2025. Built once: every test
    here only reads it (one checks that)."""
    box = VaultBox(tmp_path_factory.mktemp("rollup")).init()
    assert box.capture("Ada Lovelace", kind="person", today="2026-02-10").action == "created"
    assert box.capture("Ada Lovelace", kind="person", body="Met again.", merge_into="ada-lovelace",
                       today="2026-02-25").action == "updated"
    assert box.capture("Echo", kind="project", today="2026-02-24").action == "created"
    env = box.capture("Use SQLite for the index", kind="decision", today="2026-02-26",
                      date="2026-02-26")
    assert env.action == "created"
    old = box.capture("Old decision", kind="decision", today="2026-01-05", date="2026-01-05")
    assert old.action == "created"
    sessions = box.vault / "_agent/sessions"
    (sessions / "2026-02-24-1010-rollup-verb.md").write_text(SESSION, encoding="utf-8")
    (sessions / "2026-03-02-0900-next-week.md").write_text(SESSION, encoding="utf-8")
    daily = box.vault / "journal/daily/2026-02-24.md"
    daily.write_text(daily.read_text(encoding="utf-8") + "- 2026-02-24: reviewed the plan\n",
                     encoding="utf-8")
    for n in range(30):
        path = box.capture(f"Old concept {n}", kind="concept", today="2024-06-01").data.path
        os.utime(box.vault / path, (OLD_MTIME, OLD_MTIME))
    return box


def _paths(notes: Any) -> list[str]:
    return [n.path for n in notes]


def test_a_week_holds_its_sessions_decisions_entities_and_agent_log(box: VaultBox) -> None:
    data = rollup(box.ctx(), "week", "2026-02-26").data
    assert (data.label, data.start, data.end) == ("2026-W09", "2026-02-23", "2026-03-01")
    [session] = data.sessions
    assert session.path == "_agent/sessions/2026-02-24-1010-rollup-verb.md"
    assert session.date == "2026-02-24" and session.title == "Session: rollup verb"
    assert session.goal == ("Ship the rollup verb",)
    assert session.decisions == ("- Read frontmatter only when files changed",
                                 "- Keep it read-only")
    [decision] = data.decisions
    assert (decision.title, decision.date) == ("Use SQLite for the index", "2026-02-26")
    assert _paths(data.created) == ["projects/active/echo.md", decision.path,
                                    "_agent/memory/semantic/operator-preferences.md"]  # init
    assert [(n.path, n.date) for n in data.updated] == [
        ("resources/people/ada-lovelace.md", "2026-02-25")]
    own = [(a.date, a.line) for a in data.agent_log if not a.mechanical]
    assert own == [("2026-02-24", "- 2026-02-24: reviewed the plan")]
    days = {a.date for a in data.agent_log if a.mechanical}
    assert days == {"2026-02-24", "2026-02-25", "2026-02-26"}


def test_a_month_lists_what_was_created_in_it_once(box: VaultBox) -> None:
    data = rollup(box.ctx(), "month", "2026-02-01").data
    assert (data.start, data.end) == ("2026-02-01", "2026-02-28")
    assert "resources/people/ada-lovelace.md" in _paths(data.created)
    assert "resources/people/ada-lovelace.md" not in _paths(data.updated)
    assert [d.title for d in data.decisions] == ["Use SQLite for the index"]
    assert len(data.sessions) == 1
    january = rollup(box.ctx(), "month", "2026-01-31").data
    assert [d.title for d in january.decisions] == ["Old decision"]
    assert january.sessions == () and january.updated == ()


def test_notes_untouched_since_the_period_began_are_not_read(box: VaultBox) -> None:
    data = rollup(box.ctx(), "week", "2026-02-26").data
    assert data.notes_considered >= 35
    assert data.notes_read == data.notes_considered - 30
    assert not any(p.startswith("resources/concepts/old-concept-") for p in _paths(data.created))
    back = rollup(box.ctx(), "month", "2024-06-15").data  # their own month: read, listed
    assert len([p for p in _paths(back.created) if "/old-concept-" in p]) == 30


def test_a_rollup_writes_nothing(box: VaultBox) -> None:
    before = box.tree_digest()
    rollup(box.ctx(), "month", "2026-02-14")
    assert box.tree_digest() == before


def test_a_bad_date_is_a_usage_error_naming_date(box: VaultBox) -> None:
    with pytest.raises(EchoError) as caught:
        rollup(box.ctx(), "week", "2026-02-30")
    assert caught.value.code == ExitCode.USAGE and caught.value.message.startswith("date:")


def test_the_default_day_is_today(box: VaultBox) -> None:
    data = rollup(box.ctx(ECHO_TODAY="2026-02-25"), "week").data
    assert data.label == "2026-W09"


def _cli(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         *args: str) -> Any:
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    return run_main(["rollup", *base, *args], capsys, monkeypatch)


def test_cli_prints_the_week_in_prose_and_as_json(box: VaultBox,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    done = _cli(box, capsys, monkeypatch, "--date", "2026-02-26")
    assert done.code == 0
    assert "Rollup 2026-W09 (2026-02-23 .. 2026-03-01)" in done.out
    assert "goal: Ship the rollup verb" in done.out and "Use SQLite for the index" in done.out
    assert "- 2026-02-24: reviewed the plan" in done.out
    data = json.loads(_cli(box, capsys, monkeypatch, "--date", "2026-02-26", "--json").out)
    assert data["action"] == "read" and data["sessions"][0]["goal"] == ["Ship the rollup verb"]


@pytest.mark.parametrize(("args", "named"), [
    (("--period", "year"), "period"), (("--date", "26-02-2026"), "date"),
    (("--date", "2026-13-01"), "date"),
])
def test_cli_bad_input_exits_2_naming_the_field(box: VaultBox, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch,
                                                args: tuple[str, ...], named: str) -> None:
    done = _cli(box, capsys, monkeypatch, *args)
    assert done.code == 2 and named in done.err


def test_mcp_rollup_data_returns_the_week(box: VaultBox) -> None:
    server = make_server(box)
    try:
        err, data, text = with_client(server, lambda c: call(c, "echo_rollup_data",
                                                             period="week", date="2026-02-26"))
        assert not err and data["label"] == "2026-W09"
        assert [d["title"] for d in data["decisions"]] == ["Use SQLite for the index"]
        assert "1 session(s)" in text
        err, data, text = with_client(server, lambda c: call(c, "echo_rollup_data",
                                                             period="year"))
        assert err and data["error"]["code"] == "usage" and "period" in text
    finally:
        server.runner.close()
