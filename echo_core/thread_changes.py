"""How many vault notes the running thread has changed, so an error raised part-way
through a command can say so instead of "nothing was written".

``Vault`` counts each note it wrote, appended to or deleted (``count_change``), after the
storage said it was done. A transport reads ``changes_made()`` before and after running
one operation in a thread: when the vault backend goes away mid-command (a session-end
whose first steps landed), the difference is how many notes changed before it did. The
count is a lower bound: a write the server took but never answered is not counted.
"""

from __future__ import annotations

import threading

__all__ = ["changes_made", "count_change"]

_local = threading.local()


def count_change() -> None:
    """One more note changed by this thread."""
    _local.count = getattr(_local, "count", 0) + 1


def changes_made() -> int:
    """Notes this thread has changed so far (a running total: compare two readings)."""
    count: int = getattr(_local, "count", 0)
    return count
