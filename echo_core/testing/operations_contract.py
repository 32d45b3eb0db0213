"""``OperationsContract``: what a plugin's ``register_operations`` must register.

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the ``plugin`` fixture::

    from echo_core.testing import OperationsContract

    class TestWordCount(OperationsContract):
        @pytest.fixture
        def plugin(self):
            return my_plugin

Optionally override ``examples`` to give, per operation name, arguments that must
validate (``parse_params``) on every surface the operation is on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pytest

from echo_core.errors import EchoError
from echo_core.operations import Operation, declaration_problems, fields_of, parse_params
from echo_core.operations.schema import input_schema, output_schema
from echo_core.testing.plugin_contract import CONTRACT_PLUGIN_NAME, hooks_of, strict_host

MAX_SENTENCES = 3
#: A sentence ends at . ! or ? followed by whitespace and a capital, digit, quote or
#: backtick (so "e.g. a path" is one sentence).
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")


def count_sentences(text: str) -> int:
    """Number of sentences in ``text`` (0 for blank text)."""
    return len([part for part in _SENTENCE_BREAK.split(text.strip()) if part.strip()])


class OperationsContract:
    """Contract tests for the ``register_operations`` hook.

    Fixtures to override: ``plugin`` (the plugin implementing ``register_operations``);
    optionally ``examples`` (operation name -> valid arguments).

    Checks: at least one operation; each is a well-formed ``Operation`` registered under
    its own name (kebab-case, every parameter declared with ``param()``, a valid MCP tool
    name and CLI words); the model-facing description is at most 3 sentences; the input
    and output schemas serialise as JSON; every example validates on each surface.
    """

    @pytest.fixture
    def plugin(self) -> object:
        raise NotImplementedError("override the `plugin` fixture to return your plugin")

    @pytest.fixture
    def examples(self) -> Mapping[str, Mapping[str, Any]]:
        return {}

    @staticmethod
    def collect_operations(plugin: object) -> dict[str, Operation[Any]]:
        """``name -> operation`` as the surfaces would collect them from ``plugin``."""
        host = strict_host((CONTRACT_PLUGIN_NAME, plugin))
        assert "register_operations" in hooks_of(host, CONTRACT_PLUGIN_NAME), (
            "the plugin does not implement register_operations")
        try:
            found = host.collect("register_operations")
        except EchoError as exc:
            raise AssertionError(f"collecting operations failed: {exc.message}") from exc
        mine = {name: op for name, op in found.items()
                if host.owner_of("register_operations", name) == CONTRACT_PLUGIN_NAME}
        assert mine, "register_operations registered no operation"
        return mine

    def test_declarations_are_well_formed(self, plugin: object) -> None:
        for name, op in self.collect_operations(plugin).items():
            problem = declaration_problems(name, op)
            assert problem is None, problem

    def test_descriptions_are_short_and_present(self, plugin: object) -> None:
        for name, op in self.collect_operations(plugin).items():
            for text in (op.summary, op.tool_description):
                assert text.strip(), f"{name} has an empty summary or description"
            sentences = count_sentences(op.tool_description)
            assert sentences <= MAX_SENTENCES, (
                f"{name}: description has {sentences} sentences; keep it to {MAX_SENTENCES} "
                "(what it does, when to use it, what it returns)")

    def test_schemas_are_json(self, plugin: object) -> None:
        for name, op in self.collect_operations(plugin).items():
            for surface in ("mcp", "cli"):
                schema = input_schema(op, surface)
                assert schema["type"] == "object", name
                json.dumps(schema)
            out = output_schema(op)
            assert {"ok", "action", "message"} <= set(out["properties"]), name
            json.dumps(out)

    def test_every_parameter_has_help(self, plugin: object) -> None:
        for name, op in self.collect_operations(plugin).items():
            for info in fields_of(op.params):
                assert info.spec.help_text.strip(), f"{name}.{info.name} has no help"

    def test_examples_validate_on_every_surface(
            self, plugin: object, examples: Mapping[str, Mapping[str, Any]]) -> None:
        operations = self.collect_operations(plugin)
        for name, arguments in examples.items():
            op = operations[name]
            for surface in ("cli", "mcp"):
                if (op.cli if surface == "cli" else op.mcp) is None:
                    continue
                shown = {k: v for k, v in arguments.items()
                         if any(f.name == k and f.surface(surface) is not None
                                for f in fields_of(op.params))}
                parse_params(op.params, shown, surface=surface, operation=name)
