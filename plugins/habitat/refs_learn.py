"""The habitat's learn verbs, by reference (see ``operations_index``): learn, learnings,
approve, reject, insights (declared in ``learn_verbs``). A test checks each reference
against its declaration.

Built with ``OperationRef`` directly: ``operations_index`` imports this module before it
defines ``habitat_ref``. The ``habitat`` group's help comes from the record part's verbs;
these declare none.
"""

from __future__ import annotations

from echo_core import OperationRef


def _ref(name: str, attr: str, summary: str, word: str, tool: str = "") -> OperationRef:
    return OperationRef(name, "plugins.habitat.learn_verbs", attr, summary, ("habitat", word),
                        tool)


LEARN_REFS: tuple[OperationRef, ...] = (
    _ref("habitat-learn", "LEARN",
         "Store what an agent learned (pending the operator's review).", "learn",
         "echo_store_learning"),
    _ref("habitat-learnings", "LEARNINGS",
         "List the learnings agents stored, with their states.", "learnings"),
    _ref("habitat-approve", "APPROVE",
         "Approve learning ID: it becomes an insight note in the vault.", "approve"),
    _ref("habitat-reject", "REJECT",
         "Reject learning ID, keeping REASON; an insight it had says so.", "reject"),
    _ref("habitat-insights", "INSIGHTS",
         "Show the approved insights that match a project and prompt.", "insights",
         "echo_habitat_insights"),
)
