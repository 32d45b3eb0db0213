"""``SessionContextContract``: how a ``register_session_contexts`` provider must behave.

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the fixtures::

    from echo_core.testing import SessionContextContract

    class TestInsightContext(SessionContextContract):
        @pytest.fixture
        def plugin(self):
            return plugins.habitat

        @pytest.fixture
        def session_context(self, tmp_path):
            return context_with_approved_insights(tmp_path)

        @pytest.fixture
        def situation(self):
            return {"cwd": "/work/payments-service", "prompt": ""}
"""

from __future__ import annotations

from typing import Any

import pytest

from echo_core.testing.plugin_contract import CONTRACT_PLUGIN_NAME, strict_host

HOOK = "register_session_contexts"


class SessionContextContract:
    """Contract tests for the providers a plugin registers through
    ``register_session_contexts``.

    Fixtures to override:

    * ``plugin`` -> the plugin object (module) implementing the hook. Required.
    * ``session_context`` -> the ``ctx`` handed to providers (an ``EchoContext`` on a
      vault holding what the provider reads). Optional; ``None``.
    * ``situation`` -> keywords (cwd, project, prompt, entities) of a session for which
      every provider answers at least one block in that context. Required.

    Checks: every registration is a callable under a non-empty name; for the situation
    each provider answers a list of non-empty strings; asked for a situation that names
    nothing (no cwd, project, prompt, entities) it answers ``None`` or a list; it keeps
    to ``budget_chars``; it accepts a keyword it does not know; a hostile situation (a
    cwd with a NUL, a huge prompt, odd entity names) neither raises nor breaks the
    budget; two calls in a row answer the same.
    """

    @pytest.fixture
    def plugin(self) -> object:
        raise NotImplementedError("override the `plugin` fixture to return your plugin")

    @pytest.fixture
    def session_context(self) -> Any:
        return None

    @pytest.fixture
    def situation(self) -> dict[str, Any]:
        raise NotImplementedError("override `situation` with keywords your provider answers")

    @staticmethod
    def providers(plugin: object) -> dict[str, Any]:
        """The providers ``plugin`` registers, by name."""
        host = strict_host((CONTRACT_PLUGIN_NAME, plugin))
        found: dict[str, Any] = host.collect(HOOK)
        return found

    @staticmethod
    def check_blocks(blocks: Any, name: str) -> list[str]:
        """``blocks`` checked as a provider's answer (None -> [])."""
        if blocks is None:
            return []
        assert isinstance(blocks, list), f"{name}: answer a list of strings or None"
        for block in blocks:
            assert isinstance(block, str) and block.strip(), f"{name}: empty or non-str block"
        return blocks

    def test_registers_named_callables(self, plugin: object) -> None:
        found = self.providers(plugin)
        assert found, f"the plugin registers no provider through {HOOK}"
        for name, provider in found.items():
            assert isinstance(name, str) and name.strip()
            assert callable(provider), f"{name}: a provider must be callable"

    def test_answers_blocks_for_its_situation(self, plugin: object, session_context: Any,
                                              situation: dict[str, Any]) -> None:
        for name, provider in self.providers(plugin).items():
            blocks = self.check_blocks(provider(session_context, **situation), name)
            assert blocks, f"{name}: nothing for the situation {situation!r}"

    def test_an_empty_situation_is_answered(self, plugin: object,
                                            session_context: Any) -> None:
        for name, provider in self.providers(plugin).items():
            self.check_blocks(provider(session_context), name)

    @pytest.mark.parametrize("budget", [60, 400])
    def test_keeps_to_budget_chars(self, plugin: object, session_context: Any,
                                   situation: dict[str, Any], budget: int) -> None:
        for name, provider in self.providers(plugin).items():
            blocks = self.check_blocks(
                provider(session_context, **situation, budget_chars=budget), name)
            assert sum(len(b) for b in blocks) <= budget, f"{name}: over {budget} chars"

    def test_ignores_keywords_it_does_not_know(self, plugin: object, session_context: Any,
                                               situation: dict[str, Any]) -> None:
        for name, provider in self.providers(plugin).items():
            self.check_blocks(provider(session_context, **situation,
                                       a_keyword_from_a_later_version=1), name)

    def test_a_hostile_situation_neither_raises_nor_overflows(
            self, plugin: object, session_context: Any) -> None:
        hostile = {"cwd": "/no/such\x00/dir/../..", "project": "\u202e" + "x" * 500,
                   "prompt": "deploy " * 20_000, "entities": ("[[", "\x00", "a" * 10_000)}
        for name, provider in self.providers(plugin).items():
            blocks = self.check_blocks(provider(session_context, **hostile,
                                                budget_chars=300), name)
            assert sum(len(b) for b in blocks) <= 300

    def test_answers_the_same_twice(self, plugin: object, session_context: Any,
                                    situation: dict[str, Any]) -> None:
        for name, provider in self.providers(plugin).items():
            first = provider(session_context, **situation)
            assert provider(session_context, **situation) == first, f"{name}: not stable"
