"""Planning again when a person saved a note while an operation rewrote it.

An operation that rewrites a note from the text it read (a capture, ``put``, ``patch``,
``restore``, a frontmatter key, the inbox marks) writes it only while the note still
holds that text (``Vault.update_note``, ``Vault.replace_note``): a person's edit takes
no lock (SPEC §1.3), so it may land between the read and the write. Then nothing is
written and ``EditedMeanwhile`` is raised; ``planned_again_if_edited`` runs the whole
read-plan-write again from the new text, at most ``EDIT_ATTEMPTS`` times, and raises the
conflict after the last one (exit 1, "run the operation again": still nothing written).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from echo_core.errors import EditedMeanwhile

__all__ = ["EDIT_ATTEMPTS", "planned_again_if_edited"]

#: Times an operation reads, plans and writes before it gives up on a note a person
#: keeps saving.
EDIT_ATTEMPTS = 3

T = TypeVar("T")


def planned_again_if_edited(plan: Callable[[], T], attempts: int = EDIT_ATTEMPTS) -> T:
    """``plan()`` (which reads what it rewrites itself), run again while it raises
    ``EditedMeanwhile``, at most ``attempts`` times; the last conflict propagates."""
    for attempt in range(1, attempts + 1):
        try:
            return plan()
        except EditedMeanwhile:
            if attempt == attempts:
                raise
    raise AssertionError("attempts must be at least 1")
