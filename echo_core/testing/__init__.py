"""Contract suites: one mix-in per hookspec family (DESIGN §4).

Each suite is a class not named ``Test*``, so pytest collects it only through a subclass
that overrides the fixtures named in the suite's docstring::

    from echo_core.testing import TokenizerContract

    class TestMyTokenizer(TokenizerContract):
        @pytest.fixture
        def tokenizer(self):
            return MyTokenizer()

``CONTRACT_SUITES`` maps every hookspec in ``echo_core.hookspecs`` to the suite that
covers it; a meta-test keeps the two in step. ``PluginContract`` applies to every plugin.
``SimpleTokenizer`` is a plain tokenizer for a plugin's own tests (a ranker needs one);
``StorageSpec`` tells ``StorageContract`` how to open the vault again in another process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

# The suites use plain asserts; have pytest rewrite them for readable failures. (This
# package itself is already importing, so name each suite module.)
pytest.register_assert_rewrite(
    *(
        f"echo_core.testing.{module}"
        for module in (
            "build_target_contract",
            "commands_contract",
            "events_contract",
            "expander_contract",
            "gate_contract",
            "operations_contract",
            "plugin_contract",
            "queue_contract",
            "ranker_contract",
            "session_context_contract",
            "storage_contract",
            "storage_contract_conditional",
            "tokenizer_contract",
        )
    )
)

from echo_core.testing.build_target_contract import BuildTargetContract
from echo_core.testing.commands_contract import CommandsContract
from echo_core.testing.events_contract import EventsContract
from echo_core.testing.expander_contract import ExpanderContract
from echo_core.testing.gate_contract import GateContract
from echo_core.testing.operations_contract import OperationsContract
from echo_core.testing.plugin_contract import PluginContract
from echo_core.testing.queue_contract import QueueContract
from echo_core.testing.ranker_contract import KeyFieldRankerContract, RankerContract
from echo_core.testing.session_context_contract import SessionContextContract
from echo_core.testing.simple_tokenizer import SimpleTokenizer
from echo_core.testing.tokenizer_contract import TokenizerContract

if TYPE_CHECKING:
    from echo_core.testing.storage_contract import StorageContract, StorageSpec

#: hookspec name -> name of the suite (in this package) that covers it.
CONTRACT_SUITES: dict[str, str] = {
    "register_storage": "StorageContract",
    "register_tokenizers": "TokenizerContract",
    "register_rankers": "RankerContract",
    "register_expanders": "ExpanderContract",
    "register_queues": "QueueContract",
    "register_commands": "CommandsContract",
    "run_direct": "CommandsContract",
    "register_operations": "OperationsContract",
    "register_build_targets": "BuildTargetContract",
    "register_session_contexts": "SessionContextContract",
    "on_note_written": "EventsContract",
    "on_note_deleted": "EventsContract",
    "on_session_start": "EventsContract",
    "on_session_end": "EventsContract",
    "gate_capture": "GateContract",
}

__all__ = [
    "CONTRACT_SUITES",
    "BuildTargetContract",
    "CommandsContract",
    "EventsContract",
    "ExpanderContract",
    "GateContract",
    "KeyFieldRankerContract",
    "OperationsContract",
    "PluginContract",
    "QueueContract",
    "RankerContract",
    "SessionContextContract",
    "SimpleTokenizer",
    "StorageContract",
    "StorageSpec",
    "TokenizerContract",
]


def __getattr__(name: str) -> Any:
    """Import ``StorageContract`` (and its ``StorageSpec``) on first use, so the other
    suites never depend on it."""
    if name in ("StorageContract", "StorageSpec"):
        from echo_core.testing import storage_contract

        return getattr(storage_contract, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
