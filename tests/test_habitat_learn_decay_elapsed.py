"""Decay counts elapsed time (SPEC §7: "pending decays after 7 days"), not calendar days
(tester finding: a learning stored on 12-07 at 10:00 was demoted on 12-14 at 09:59, a
minute before 7 x 24 h had passed). A rejection is demoted 90 x 24 h after it was made."""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any

import pytest

from plugins.habitat.decay import PENDING_DAYS, REJECTED_DAYS
from plugins.habitat.learnings import LearningStore
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main

STORED = _dt.datetime(2026, 12, 7, 10, 0)


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path / "box").init()


def habitat(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str], at: _dt.datetime, *args: str) -> dict[str, Any]:
    """``echo-memory habitat <args> --json`` with ``ECHO_NOW`` (and its day) pinned."""
    for key in [k for k in os.environ if k.startswith("ECHO_") and k != "ECHO_PLUGIN_DISTS"]:
        monkeypatch.delenv(key)
    env = box.env(ECHO_TODAY=at.date().isoformat(), ECHO_NOW=at.isoformat())
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    words = ["habitat", args[0], "--vault", str(box.vault), "--state-dir", str(box.state),
             *args[1:], "--json"]
    done = run_main(words, capsys, monkeypatch)
    assert done.code == 0, done.err
    data: dict[str, Any] = json.loads(done.out)
    return data


def state_at(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str], at: _dt.datetime) -> str:
    rows = habitat(box, monkeypatch, capsys, at, "learnings")["learnings"]
    assert len(rows) == 1
    return str(rows[0]["state"])


def test_pending_is_demoted_after_7_x_24_hours_not_on_the_7th_calendar_day(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    habitat(box, monkeypatch, capsys, STORED, "learn", "Run the tests with pytest -n 2")
    due = STORED + _dt.timedelta(days=PENDING_DAYS)
    assert due.isoformat() == "2026-12-14T10:00:00"
    assert state_at(box, monkeypatch, capsys, due - _dt.timedelta(minutes=1)) == "pending"
    assert state_at(box, monkeypatch, capsys, due) == "demoted-pending"


def test_a_reinforcement_restarts_the_7_x_24_hours(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    habitat(box, monkeypatch, capsys, STORED, "learn", "Run the tests with pytest -n 2")
    seen = STORED + _dt.timedelta(days=3, hours=8, minutes=30)
    habitat(box, monkeypatch, capsys, seen, "learn", "run the tests with pytest -n 2!")
    due = seen + _dt.timedelta(days=PENDING_DAYS)
    assert state_at(box, monkeypatch, capsys, due - _dt.timedelta(seconds=1)) == "pending"
    assert state_at(box, monkeypatch, capsys, due) == "demoted-pending"


def test_rejected_is_demoted_after_90_x_24_hours(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    learned = habitat(box, monkeypatch, capsys, STORED, "learn", "Always use tabs")
    rejected_at = STORED + _dt.timedelta(hours=8)  # 18:00
    habitat(box, monkeypatch, capsys, rejected_at, "reject", learned["learning"]["id"],
            "PEP 8 says spaces")
    due = rejected_at + _dt.timedelta(days=REJECTED_DAYS)
    assert state_at(box, monkeypatch, capsys, due - _dt.timedelta(minutes=1)) == "rejected"
    assert state_at(box, monkeypatch, capsys, due) == "demoted-rejected"


def test_the_store_alone_counts_from_the_time_of_day_it_is_given(tmp_path: Path) -> None:
    store = LearningStore(tmp_path / "l.sqlite")
    store.store("one idea here", type="learning", tags=[], agent_id="a", session_id="s",
                rationale="", now=STORED)
    due = STORED + _dt.timedelta(days=PENDING_DAYS)
    early = due - _dt.timedelta(minutes=1)
    assert store.decay(early.date(), early) == []
    assert [d.after for d in store.decay(due.date(), due)] == ["demoted-pending"]
