"""Dates read from frontmatter values, whatever form YAML gave them."""

from __future__ import annotations

import datetime as _dt
from typing import Any


def as_date(value: Any) -> _dt.date | None:
    """A frontmatter date (a YAML date, a datetime, or a string starting with an ISO
    date such as ``2026-03-01`` or ``2026-03-01T09:30``); None for anything else."""
    if isinstance(value, _dt.datetime):
        return value.date()
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    return None
