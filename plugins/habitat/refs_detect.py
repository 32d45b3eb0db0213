"""The habitat's detect verbs, by reference (see ``operations_index``)."""

from __future__ import annotations

from echo_core import OperationRef

DETECT_REFS: tuple[OperationRef, ...] = ()
