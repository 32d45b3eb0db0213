"""The time source. ``ECHO_NOW`` / ``ECHO_TODAY`` pin it (tests); otherwise the clock.

``ECHO_NOW`` is an ISO-8601 datetime (``2026-03-01T09:30:00``) or a time of day
(``14:30``, or the seeds' ``1430``) on ``ECHO_TODAY`` (else on the real date);
``ECHO_TODAY`` is an ISO date. When only a full ``ECHO_NOW`` is set, today is its date;
when only ``ECHO_TODAY`` is set, now is noon of that day, so that both always agree.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping

from echo_core.errors import usage_error
from echo_core.lazy_pattern import LazyPattern


def now(env: Mapping[str, str] | None = None) -> _dt.datetime:
    """The current local time (naive), honouring ``ECHO_NOW`` then ``ECHO_TODAY``."""
    env = os.environ if env is None else env
    raw = (env.get("ECHO_NOW") or "").strip()
    if raw:
        clock_time = _time_of_day(raw)
        if clock_time is not None:
            day = env.get("ECHO_TODAY")
            return _dt.datetime.combine(_parse_day(day) if day else _dt.date.today(),
                                        clock_time)
        try:
            return _dt.datetime.fromisoformat(raw).replace(tzinfo=None)
        except ValueError:
            raise usage_error(
                f"ECHO_NOW={raw!r} is neither an ISO datetime nor a time of day; use e.g. "
                "2026-03-01T09:30:00, 14:30 or 1430"
            ) from None
    day = env.get("ECHO_TODAY")
    if day:
        return _dt.datetime.combine(_parse_day(day), _dt.time(12, 0))
    return _dt.datetime.now().replace(microsecond=0)


def today(env: Mapping[str, str] | None = None) -> _dt.date:
    """Today's date, honouring ``ECHO_TODAY`` then ``ECHO_NOW``."""
    env = os.environ if env is None else env
    day = env.get("ECHO_TODAY")
    if day:
        return _parse_day(day)
    return now(env).date()


_TIME_OF_DAY = LazyPattern(r"^([01]?\d|2[0-3]):?([0-5]\d)$")


def _time_of_day(raw: str) -> _dt.time | None:
    """``HH:MM`` or ``HHMM`` as a time (None for anything else)."""
    match = _TIME_OF_DAY.match(raw)
    if match is None or (":" not in raw and len(raw) != 4):
        return None
    return _dt.time(int(match.group(1)), int(match.group(2)))


def _parse_day(raw: str) -> _dt.date:
    try:
        return _dt.date.fromisoformat(raw)
    except ValueError:
        raise usage_error(f"ECHO_TODAY={raw!r} is not an ISO date; use e.g. 2026-03-01") from None
