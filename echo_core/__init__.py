"""echo_core: the small core of echo-memory — models, hookspecs, plugin host, operations.

Public names for plugins: ``hookimpl``, ``EchoError``, ``ExitCode``, the models and the
protocols. ``echo_core`` never imports a plugin. Names other than the first three are
imported on first use (PEP 562), so ``import echo_core`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from echo_core.errors import EchoError, ExitCode
from echo_core.hookspecs import hookimpl

if TYPE_CHECKING:
    from echo_core.context import EchoContext, create_context
    from echo_core.models import CaptureRequest
    from echo_core.ops.capture import capture
    from echo_core.ops.init import init_vault
    from echo_core.ops.recall import recall
    from echo_core.protocols import (
        IndexDoc,
        PersistentRanker,
        Ranker,
        RankerFactory,
        Tokenizer,
        WeightedTerm,
    )
    from echo_core.storage_base import StorageBase

#: Public name -> the module that defines it (imported on first access).
_LAZY = {
    "CaptureRequest": "echo_core.models",
    "EchoContext": "echo_core.context",
    "IndexDoc": "echo_core.protocols",
    "PersistentRanker": "echo_core.protocols",
    "Ranker": "echo_core.protocols",
    "RankerFactory": "echo_core.protocols",
    "StorageBase": "echo_core.storage_base",
    "Tokenizer": "echo_core.protocols",
    "WeightedTerm": "echo_core.protocols",
    "capture": "echo_core.ops.capture",
    "create_context": "echo_core.context",
    "init_vault": "echo_core.ops.init",
    "recall": "echo_core.ops.recall",
}

__all__ = [
    "CaptureRequest",
    "EchoContext",
    "EchoError",
    "ExitCode",
    "IndexDoc",
    "PersistentRanker",
    "Ranker",
    "RankerFactory",
    "StorageBase",
    "Tokenizer",
    "WeightedTerm",
    "capture",
    "create_context",
    "hookimpl",
    "init_vault",
    "recall",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
