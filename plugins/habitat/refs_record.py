"""The habitat's record verbs, by reference (see ``operations_index``)."""

from __future__ import annotations

from echo_core import OperationRef

RECORD_REFS: tuple[OperationRef, ...] = ()
