"""The pinned clock: ``ECHO_NOW`` as an ISO datetime or a time of day (issue 13, item 10)."""

from __future__ import annotations

import datetime as _dt

import pytest

from echo_core import EchoError
from echo_core.clock import now, today


@pytest.mark.parametrize("raw", ["1430", "14:30", " 14:30 "])
def test_a_time_of_day_pins_the_time_on_echo_today(raw: str) -> None:
    env = {"ECHO_NOW": raw, "ECHO_TODAY": "2026-03-01"}
    assert now(env) == _dt.datetime(2026, 3, 1, 14, 30)
    assert today(env) == _dt.date(2026, 3, 1)


def test_a_time_of_day_alone_is_on_the_real_date() -> None:
    pinned = now({"ECHO_NOW": "0905"})
    assert (pinned.hour, pinned.minute) == (9, 5) and pinned.date() == _dt.date.today()


def test_an_iso_datetime_still_pins_both() -> None:
    env = {"ECHO_NOW": "2026-03-01T09:30:00"}
    assert now(env) == _dt.datetime(2026, 3, 1, 9, 30) and today(env) == _dt.date(2026, 3, 1)


@pytest.mark.parametrize("raw", ["2460", "930", "25:00", "noon", "14:3"])
def test_anything_else_is_a_usage_error_naming_both_forms(raw: str) -> None:
    with pytest.raises(EchoError, match="time of day") as caught:
        now({"ECHO_NOW": raw})
    assert caught.value.code == 2
