"""``rollup``'s dates and text: ``--date`` takes a day or a date and time (its day) and
a bad one is refused with the form and an example; a decision counts on its ``date``,
else its file name's day, else ``created``; a session's Goal and Decisions Made lines
are shown without their own list marker."""

from __future__ import annotations

import datetime as _dt
import os

import pytest

from echo_core.actions import Action
from echo_core.errors import EchoError, ExitCode
from echo_core.models import Envelope
from echo_core.ops.rollup import RollupResult, RollupSession, rollup
from echo_core.verbs.rollup_verbs import render_rollup
from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun, run_main

OLD = _dt.datetime(2020, 1, 1, tzinfo=_dt.UTC).timestamp()


def _cli(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         *args: str) -> CliRun:
    for key, value in box.env(ECHO_TODAY="2026-03-10").items():
        monkeypatch.setenv(key, value)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    return run_main(["rollup", *base, *args], capsys, monkeypatch)


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> VaultBox:
    """Three decisions written by hand: named 2026-03-14 but created 2026-03-01; the
    same with a ``date`` of 2026-03-20; and one named in week 11 whose file time is old
    (copied with cp -p)."""
    box = VaultBox(tmp_path_factory.mktemp("rollup-dates")).init()
    notes = {
        "decisions/2026-03-14-named.md": "created: 2026-03-01\n",
        "decisions/2026-03-14-dated.md": "created: 2026-03-01\ndate: 2026-03-20\n",
        "decisions/2026-03-12-copied.md": "created: 2026-03-12\n",
    }
    for path, keys in notes.items():
        (box.vault / path).write_text(f"---\ntype: decision\n{keys}---\n# {path}\n",
                                      encoding="utf-8")
    os.utime(box.vault / "decisions/2026-03-12-copied.md", (OLD, OLD))
    return box


def _decisions(box: VaultBox, day: str) -> list[tuple[str, str]]:
    return [(d.path, d.date) for d in rollup(box.ctx(), "week", day).data.decisions]


def test_a_decision_counts_on_its_date_else_its_file_names_day_else_created(
        box: VaultBox) -> None:
    assert _decisions(box, "2026-03-10") == [("decisions/2026-03-12-copied.md", "2026-03-12"),
                                             ("decisions/2026-03-14-named.md", "2026-03-14")]
    assert _decisions(box, "2026-03-20") == [("decisions/2026-03-14-dated.md", "2026-03-20")]
    assert _decisions(box, "2026-03-01") == []
    created = [n.path for n in rollup(box.ctx(), "week", "2026-03-01").data.created]
    assert "decisions/2026-03-14-named.md" in created  # Created still goes by `created`


def test_help_says_which_date_counts_for_a_decision(
        box: VaultBox, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    done = _cli(box, capsys, monkeypatch, "--help")
    text = " ".join(done.out.split())
    assert "a decision's day is its frontmatter `date`" in text
    assert "else the day its file name starts with" in text and "else its `created`" in text


@pytest.mark.parametrize("given", ["2026-03-10T10:00", "2026-03-10 23:30-08:00",
                                   " 2026-03-10T10:00:00Z "])
def test_a_date_and_time_counts_as_its_day(box: VaultBox, given: str) -> None:
    assert rollup(box.ctx(), "week", given).data.label == "2026-W11"


def test_cli_takes_a_date_and_time(box: VaultBox, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    done = _cli(box, capsys, monkeypatch, "--date", "2026-03-10T10:00")
    assert done.code == 0, done.err
    assert done.out.splitlines()[0] == "Rollup 2026-W11 (2026-03-09 .. 2026-03-15)"


@pytest.mark.parametrize(("given", "says"), [
    ("2026-02-30", "'2026-02-30' is not a real day"), ("10/03/2026", "'10/03/2026' is not a day"),
    ("2026-03-10T25:00", "'2026-03-10T25:00' is not a day"), ("x" * 200, "'" + "x" * 37 + "...'"),
])
def test_a_bad_date_is_refused_with_the_form_and_an_example(
        box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        given: str, says: str) -> None:
    done = _cli(box, capsys, monkeypatch, "--date", given)
    assert done.code == 2 and "Traceback" not in done.err
    assert f"date: {says}" in done.err
    assert "give YYYY-MM-DD, e.g. --date 2026-03-10" in done.err
    with pytest.raises(EchoError) as caught:
        rollup(box.ctx(), "week", given)
    assert caught.value.code == ExitCode.USAGE


def test_session_lines_are_shown_without_their_own_list_marker() -> None:
    session = RollupSession("_agent/sessions/2026-03-10-0900-s.md", "2026-03-10", "S",
                            ("- ship it",), ("- decided X", "* decided Y", "1. decided Z",
                                             "-1 is not a marker"))
    result = RollupResult("week", "2026-W11", "2026-03-09", "2026-03-15", (session,), (), (),
                          (), (), 0, 0)
    lines = render_rollup(Envelope(True, Action.READ, "", result)).splitlines()
    assert lines[3:8] == ["      goal: ship it", "      decided: decided X",
                          "      decided: decided Y", "      decided: 1. decided Z",
                          "      decided: -1 is not a marker"]
