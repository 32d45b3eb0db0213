"""The habitat's detect verbs, by reference (see ``operations_index``): patterns, one
pattern, batches, one batch, flag (``detect_verbs``), the daily digest
(``digest_verbs``) and status (``status_verbs``).

Built with ``OperationRef`` directly, not ``operations_index.habitat_ref``:
``operations_index`` imports this module before it defines ``habitat_ref``, so importing
it from here would be circular. The ``habitat`` group's help comes from the record
part's verbs (the first to name the group); these declare none.
"""

from __future__ import annotations

from echo_core import OperationRef


def _ref(name: str, module: str, attr: str, summary: str, word: str) -> OperationRef:
    return OperationRef(name, f"plugins.habitat.{module}", attr, summary, ("habitat", word),
                        f"echo_habitat_{word}")


DETECT_REFS: tuple[OperationRef, ...] = (
    _ref("habitat-patterns", "detect_verbs", "PATTERNS",
         "List the failure patterns found in the record (--scan: find new ones first).",
         "patterns"),
    _ref("habitat-pattern", "detect_verbs", "PATTERN",
         "Show one pattern with its evidence (--status: move it).", "pattern"),
    _ref("habitat-batches", "detect_verbs", "BATCHES",
         "List the batches of failures found (8 per batch).", "batches"),
    _ref("habitat-batch", "detect_verbs", "BATCH",
         "Show one batch of failures with their records.", "batch"),
    _ref("habitat-flag", "detect_verbs", "FLAG",
         "Flag a turn of a session as a failure (a flag record + pattern evidence).", "flag"),
    _ref("habitat-digest", "digest_verbs", "DIGEST",
         "Write today's habitat digest note (learnings to approve, patterns, ...).", "digest"),
    _ref("habitat-status", "status_verbs", "STATUS",
         "Show the habitat: active agents, pending approvals, patterns, last digest.", "status"),
)
