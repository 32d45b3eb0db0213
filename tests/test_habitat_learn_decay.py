"""Decay of learnings with ``ECHO_TODAY`` pinned (issue 18 item 2): pending demoted after
7 days, rejected after 90, nothing deleted; learned again, they come back."""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from plugins.habitat.decay import PENDING_DAYS, REJECTED_DAYS, REVIVE_RECURRENCE
from plugins.habitat.learnings import LearningStore
from tests.capture_kit import VaultBox
from tests.test_habitat_learn_store import cli, learn, store_of

DAY0 = _dt.date(2026, 3, 1)


def day(n: int) -> str:
    return (DAY0 + _dt.timedelta(days=n)).isoformat()


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path / "box").init()


def listing(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str], today: str) -> dict[str, Any]:
    done = cli(box, monkeypatch, capsys, "habitat", "learnings", "--json", today=today)
    assert done.code == 0, done.err
    data: dict[str, Any] = json.loads(done.out)
    return data


def counts(store: LearningStore) -> tuple[int, int, int]:
    conn = sqlite3.connect(store.path)
    try:
        return tuple(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # type: ignore[return-value]
                     for table in ("learnings", "provenance", "learning_fts"))
    finally:
        conn.close()


def test_pending_is_demoted_on_the_7th_day_not_the_6th_and_nothing_is_deleted(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    first = learn(box, monkeypatch, capsys, "Run the tests with pytest -n 2")["learning"]
    learn(box, monkeypatch, capsys, "Never deploy on Fridays", today=day(3))
    before = counts(store_of(box))
    states = {x["id"]: x["state"] for x in
              listing(box, monkeypatch, capsys, day(PENDING_DAYS - 1))["learnings"]}
    assert set(states.values()) == {"pending"}
    data = listing(box, monkeypatch, capsys, day(PENDING_DAYS))
    states = {x["id"]: x["state"] for x in data["learnings"]}
    assert states[first["id"]] == "demoted-pending"
    assert sorted(states.values()) == ["demoted-pending", "pending"]
    assert data["demoted"] == [f"{first['id']}: pending -> demoted-pending"]
    assert counts(store_of(box)) == before
    assert listing(box, monkeypatch, capsys, day(PENDING_DAYS))["demoted"] == []  # once only
    changes = store_of(box).state_changes(first["id"])
    assert [(c[1], c[2]) for c in changes] == [("", "pending"), ("pending", "demoted-pending")]


def test_a_learning_reinforced_stays_pending_and_a_demoted_one_comes_back(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    learn(box, monkeypatch, capsys, "Run the tests with pytest -n 2")
    learn(box, monkeypatch, capsys, "run the tests with pytest -n 2!", today=day(5))
    assert store_of(box).list()[0].state == "pending"
    assert listing(box, monkeypatch, capsys, day(11))["learnings"][0]["state"] == "pending"
    assert listing(box, monkeypatch, capsys, day(12))["learnings"][0]["state"] == \
        "demoted-pending"
    again = learn(box, monkeypatch, capsys, "Run the tests with pytest -n 2", today=day(30))
    assert again["learning"]["state"] == "pending" and again["learning"]["recurrence"] == 3


def test_rejected_is_demoted_after_90_days_keeping_its_reason(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    learning = learn(box, monkeypatch, capsys, "Always use tabs in Python")["learning"]
    done = cli(box, monkeypatch, capsys, "habitat", "reject", learning["id"][:5],
               "PEP 8 says spaces", today=day(2))
    assert done.code == 0, done.err
    before = counts(store_of(box))
    reject_day = 2
    rows = listing(box, monkeypatch, capsys, day(reject_day + REJECTED_DAYS - 1))["learnings"]
    assert rows[0]["state"] == "rejected"
    rows = listing(box, monkeypatch, capsys, day(reject_day + REJECTED_DAYS))["learnings"]
    assert (rows[0]["state"], rows[0]["reason"]) == ("demoted-rejected", "PEP 8 says spaces")
    assert counts(store_of(box)) == before


def test_a_rejected_learning_that_keeps_recurring_comes_back_to_review(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    learning = learn(box, monkeypatch, capsys, "Always use tabs in Python")["learning"]
    assert cli(box, monkeypatch, capsys, "habitat", "reject", learning["id"],
               "PEP 8 says spaces").code == 0
    for n in range(1, REVIVE_RECURRENCE):
        again = learn(box, monkeypatch, capsys, "always use tabs in python", today=day(n))
        assert (again["action"], again["learning"]["state"]) == ("reinforced", "rejected")
    back = learn(box, monkeypatch, capsys, "Always use tabs in Python.",
                 today=day(REVIVE_RECURRENCE))
    assert back["action"] == "revived"
    assert (back["learning"]["state"], back["learning"]["reason"],
            back["learning"]["recurrence"]) == ("pending", "PEP 8 says spaces",
                                                1 + REVIVE_RECURRENCE)


def test_a_demoted_rejection_comes_back_too(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    learning = learn(box, monkeypatch, capsys, "Always use tabs in Python")["learning"]
    cli(box, monkeypatch, capsys, "habitat", "reject", learning["id"], "no")
    listing(box, monkeypatch, capsys, day(200))
    assert store_of(box).list()[0].state == "demoted-rejected"
    for n in range(REVIVE_RECURRENCE):
        last = learn(box, monkeypatch, capsys, "Always use tabs in Python", today=day(201 + n))
    assert last["learning"]["state"] == "pending"


def test_approved_never_decays(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    learning = learn(box, monkeypatch, capsys, "Run the tests with pytest -n 2")["learning"]
    assert cli(box, monkeypatch, capsys, "habitat", "approve", learning["id"]).code == 0
    assert listing(box, monkeypatch, capsys, day(1000))["learnings"][0]["state"] == "approved"


def test_decay_by_the_store_alone_is_deterministic_for_a_pinned_day(tmp_path: Path) -> None:
    store = LearningStore(tmp_path / "l.sqlite")
    noon = _dt.datetime(2026, 3, 1, 12, 0)
    for text in ("one idea here", "another idea there"):
        store.store(text, type="learning", tags=[], agent_id="a", session_id="s",
                    rationale="", now=noon)
    assert store.decay(DAY0 + _dt.timedelta(days=6), noon) == []
    done = store.decay(DAY0 + _dt.timedelta(days=7), noon)
    assert sorted(d.after for d in done) == ["demoted-pending", "demoted-pending"]
    assert store.decay(DAY0 + _dt.timedelta(days=7), noon) == []


def test_status_and_digest_count_as_pending_only_what_decay_leaves_pending(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The digest and ``habitat status`` read pending learnings as every learn verb does:
    after the day's decay, so a learning not seen for 7 days is no longer "to approve"."""
    learn(box, monkeypatch, capsys, "Run the tests with pytest -n 2")
    learn(box, monkeypatch, capsys, "Never deploy on Fridays", today=day(3))
    done = cli(box, monkeypatch, capsys, "habitat", "status", "--json",
               today=day(PENDING_DAYS))
    assert done.code == 0, done.err
    assert json.loads(done.out)["pending_approvals"] == 1
    done = cli(box, monkeypatch, capsys, "habitat", "digest", "--json", today=day(PENDING_DAYS))
    assert done.code == 0, done.err
    assert [x["content"] for x in json.loads(done.out)["digest"]["learnings"]] == \
        ["Never deploy on Fridays"]
    assert counts(store_of(box))[0] == 2  # demoted, not deleted
