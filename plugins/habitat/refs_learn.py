"""The habitat's learn verbs, by reference (see ``operations_index``)."""

from __future__ import annotations

from echo_core import OperationRef

LEARN_REFS: tuple[OperationRef, ...] = ()
