"""``rollup`` at the edges: a day at either end of the calendar is an answer or a usage
error naming ``date`` (never a traceback), and the text output counts sessions, not
their lines, cutting a long list between sessions and saying how many it left out."""

from __future__ import annotations

import json

import pytest

from echo_core.actions import Action
from echo_core.errors import EchoError, ExitCode
from echo_core.models import Envelope
from echo_core.ops.rollup import RollupResult, RollupSession, rollup
from echo_core.verbs.rollup_verbs import render_rollup
from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun, run_main


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> VaultBox:
    """A fresh vault with one session log (a goal and two decisions) on 2026-03-01."""
    box = VaultBox(tmp_path_factory.mktemp("rollup-edges")).init()
    (box.vault / "_agent/sessions/2026-03-01-0900-s1.md").write_text(
        "# Session: s1\n\n## Goal\nShip\n\n## Decisions Made\n- a\n- b\n", encoding="utf-8")
    return box


def _cli(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         *args: str) -> CliRun:
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    return run_main(["rollup", *base, *args], capsys, monkeypatch)


EDGES = (("week", "0001-01-01", "Rollup 0001-W01 (0001-01-01 .. 0001-01-07)"),
         ("month", "0001-01-01", "Rollup 0001-01 (0001-01-01 .. 0001-01-31)"),
         ("month", "9999-12-31", "Rollup 9999-12 (9999-12-01 .. 9999-12-31)"),
         ("week", "9999-12-26", "Rollup 9999-W51 (9999-12-20 .. 9999-12-26)"))


def test_a_period_inside_the_calendar_is_summed_up_even_at_its_ends(
        box: VaultBox, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for period, day, heading in EDGES:
        done = _cli(box, capsys, monkeypatch, "--period", period, "--date", day)
        assert done.code == 0, (day, done.err)
        assert done.out.splitlines()[0] == heading and "Sessions: none" in done.out


def test_a_week_running_past_the_last_date_is_a_usage_error_naming_date(
        box: VaultBox, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    done = _cli(box, capsys, monkeypatch, "--date", "9999-12-31")
    assert done.code == 2 and "Traceback" not in done.err
    assert "date: '9999-12-31'" in done.err and "9999-12-26" in done.err
    with pytest.raises(EchoError) as caught:
        rollup(box.ctx(), "week", "9999-12-27")
    assert caught.value.code == ExitCode.USAGE and caught.value.message.startswith("date:")


def test_the_text_counts_sessions_not_their_goal_and_decision_lines(
        box: VaultBox, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    done = _cli(box, capsys, monkeypatch, "--date", "2026-03-01")
    assert done.code == 0, done.err
    assert done.out.splitlines()[1] == "Sessions (1):"
    assert "    goal: Ship" in done.out and done.out.count("decided:") == 2
    data = json.loads(_cli(box, capsys, monkeypatch, "--date", "2026-03-01", "--json").out)
    assert len(data["sessions"]) == 1


def _result(sessions: int, decisions: int) -> Envelope[RollupResult]:
    rows = tuple(RollupSession(f"_agent/sessions/2026-03-01-{n:04d}-s.md", "2026-03-01",
                               f"Session {n}", ("Ship",),
                               tuple(f"- d{n}.{k}" for k in range(decisions)))
                 for n in range(sessions))
    result = RollupResult("week", "2026-W09", "2026-02-23", "2026-03-01", rows, (), (), (),
                          (), 0, 0)
    return Envelope(True, Action.READ, "", result)


def test_a_long_session_list_is_cut_between_sessions_saying_how_many_are_left_out() -> None:
    text = render_rollup(_result(20, 3))  # 5 lines each: 10 sessions fill 50 lines
    lines = text.splitlines()
    assert lines[1] == "Sessions (20):"
    block = lines[2:lines.index("Decisions: none")]
    assert block[-1] == "  ... and 10 more session(s) (see --json)"
    shown = [line for line in block[:-1] if not line.startswith("    ")]
    assert shown == [f"  2026-03-01  Session {n}  (_agent/sessions/2026-03-01-{n:04d}-s.md)"
                     for n in range(10)]
    assert block[-2] == "      decided: d9.2"  # the last shown session is whole


def test_a_session_longer_than_the_cut_is_still_shown_whole() -> None:
    lines = render_rollup(_result(2, 60)).splitlines()
    assert lines[1] == "Sessions (2):"
    assert "      decided: d0.59" in lines and "      decided: d1.0" not in lines
    assert "  ... and 1 more session(s) (see --json)" in lines
