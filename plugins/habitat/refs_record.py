"""The habitat's record verbs, by reference (see ``operations_index``): ``habitat
record`` (MCP ``echo_habitat_record``), ``ask`` (``echo_ask_habitat``), ``fold`` and
``fork``. A test checks each reference against its declaration.

Built with ``OperationRef`` directly: ``operations_index`` imports this module before it
defines ``habitat_ref``. These are the first verbs naming the ``habitat`` group, so they
carry its help (``operations_index.GROUP_HELP``, which their declarations give too).
"""

from __future__ import annotations

from echo_core import OperationRef

_GROUP_HELP = ("The habitat: what agents did (record), what they learned (learnings, "
               "insights), what keeps failing (patterns).")


def _ref(name: str, module: str, attr: str, summary: str, word: str,
         tool: str) -> OperationRef:
    return OperationRef(name, f"plugins.habitat.{module}", attr, summary, ("habitat", word),
                        tool, (), _GROUP_HELP)


RECORD_REFS: tuple[OperationRef, ...] = (
    _ref("habitat-record", "record_verbs", "HABITAT_RECORD",
         "Append a record (or a batch) to the habitat's shared log.", "record",
         "echo_habitat_record"),
    _ref("habitat-ask", "loom_ask", "HABITAT_ASK",
         "Search what agents did (the record) and what they learned.", "ask",
         "echo_ask_habitat"),
    _ref("habitat-fold", "loom_fold", "HABITAT_FOLD",
         "Summarise a span of a session into one fold record (nothing deleted).", "fold",
         "echo_habitat_fold"),
    _ref("habitat-fork", "record_verbs", "HABITAT_FORK",
         "Start a new branch of the record from one of its records.", "fork",
         "echo_habitat_fork"),
)
