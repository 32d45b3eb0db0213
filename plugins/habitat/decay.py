"""How learnings decay and come back: demoted, never deleted (SPEC §7, issue 18 item 2).

Rules, by the time elapsed until now (``ECHO_NOW`` pins it; with only ``ECHO_TODAY``,
noon of that day), SPEC §7 "pending decays after 7 days":

* ``pending`` not seen for ``PENDING_DAYS`` (7) x 24 hours -> ``demoted-pending``: the
  age counts from its latest store (``last_seen``), so a learning that keeps recurring
  stays in review; stored on the 7th at 10:00, it is demoted from the 14th at 10:00 on,
  not at 09:59.
* ``rejected`` for ``REJECTED_DAYS`` (90) x 24 hours -> ``demoted-rejected``: counted
  from the rejection (``decided``); the reason stays.
* Learned again (``state_when_reinforced``): a ``demoted-pending`` learning is
  ``pending`` again; a ``rejected`` or ``demoted-rejected`` one comes back to ``pending``
  once its recurrence reaches ``REVIVE_RECURRENCE`` (3) more than at its rejection, i.e.
  agents kept learning it after the operator said no: the operator sees it again, with
  the old reason. ``approved`` never decays.

When: every habitat verb that reads or decides learnings (``habitat learn``,
``learnings``, ``approve``, ``reject``, ``insights``, the SessionStart injection) runs
``demote_due`` first, in its own transaction; running it twice at one time changes
nothing the second time. Each demotion is a ``state_changes`` row.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING

import attrs

from plugins.habitat.learnings_schema import log_change

if TYPE_CHECKING:
    from plugins.habitat.learnings import Learning
    from plugins.habitat.pg_sql import SqlConn

__all__ = ["PENDING_DAYS", "REJECTED_DAYS", "REVIVE_RECURRENCE", "Demotion", "demote_due",
           "state_when_reinforced"]

PENDING_DAYS = 7
REJECTED_DAYS = 90
REVIVE_RECURRENCE = 3
#: The states a rejection leaves a learning in.
REJECTED_STATES = ("rejected", "demoted-rejected")


@attrs.frozen
class Demotion:
    """One learning demoted: its id, the state it left and the one it took."""

    id: str
    before: str
    after: str


def state_when_reinforced(found: Learning, recurrence: int) -> str:
    """The state of ``found`` once learned again, at ``recurrence`` (module docstring)."""
    if found.state == "demoted-pending":
        return "pending"
    if found.state in REJECTED_STATES and \
            recurrence - found.decided_recurrence >= REVIVE_RECURRENCE:
        return "pending"
    return found.state


def _cutoff(moment: _dt.datetime, days: int) -> str:
    """The latest time a learning dated at or before is due at ``moment``: ``days`` x 24
    hours before it (ISO to the second, as the store's times, so they compare as text)."""
    return (moment - _dt.timedelta(days=days)).isoformat(timespec="seconds")


def demote_due(conn: SqlConn, moment: _dt.datetime, stamp: str) -> list[Demotion]:
    """Demote, inside the caller's transaction, every learning due at ``moment``."""
    done: list[Demotion] = []
    rules = (("pending", "last_seen", PENDING_DAYS, "demoted-pending",
              f"not learned again for {PENDING_DAYS} days"),
             ("rejected", "decided", REJECTED_DAYS, "demoted-rejected",
              f"rejected {REJECTED_DAYS} days ago"))
    for before, column, days, after, why in rules:
        rows = conn.execute(f"SELECT id FROM learnings WHERE state = ? AND {column} <= ? "
                            "ORDER BY id", (before, _cutoff(moment, days))).fetchall()
        for (learning_id,) in rows:
            conn.execute("UPDATE learnings SET state = ?, updated = ? WHERE id = ?",
                         (after, stamp, learning_id))
            log_change(conn, learning_id, stamp, before, after, why)
            done.append(Demotion(learning_id, before, after))
    return done
