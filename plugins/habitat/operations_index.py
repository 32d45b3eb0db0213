"""Every habitat verb, by reference (``OperationRef``): what the CLI needs to list and
route it without importing its declaration. Each part of the habitat keeps its own
index (``refs_record``, ``refs_learn``, ``refs_detect``); this joins them in CLI order.
A test checks every reference against the declaration it loads."""

from __future__ import annotations

from echo_core import OperationRef
from plugins.habitat.refs_detect import DETECT_REFS
from plugins.habitat.refs_learn import LEARN_REFS
from plugins.habitat.refs_record import RECORD_REFS

__all__ = ["GROUP_HELP", "HABITAT_OPERATIONS", "habitat_ref"]

GROUP_HELP = ("The habitat: what agents did (record), what they learned (learnings, "
              "insights), what keeps failing (patterns).")


def habitat_ref(name: str, module: str, attr: str, summary: str, command: tuple[str, ...],
                tool: str = "", skills: tuple[str, ...] = ()) -> OperationRef:
    """The reference of a verb declared in ``plugins.habitat.<module>``."""
    return OperationRef(name, f"plugins.habitat.{module}", attr, summary, command, tool,
                        skills, GROUP_HELP if len(command) > 1 else "")


HABITAT_OPERATIONS: tuple[OperationRef, ...] = RECORD_REFS + LEARN_REFS + DETECT_REFS
