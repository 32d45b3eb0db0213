"""``GateContract``: the behaviour every ``gate_capture`` implementation must show.

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the fixtures::

    from echo_core.testing import GateContract

    class TestDuplicateGate(GateContract):
        @pytest.fixture
        def gate_plugin(self):
            return plugins.gate_duplicate

        @pytest.fixture
        def gate_context(self, tmp_path):
            return context_with_note(tmp_path, "Kubernetes")

        @pytest.fixture
        def passing_request(self):
            return CaptureRequest(title="Something new")

        @pytest.fixture
        def stopping_request(self):
            return CaptureRequest(title="Kubernetes")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from echo_core.models import CaptureRequest, GateStop
from echo_core.plugins import PluginHost
from echo_core.testing.plugin_contract import CONTRACT_PLUGIN_NAME, hooks_of, strict_host

#: Keys every ``GateStop`` candidate must carry.
CANDIDATE_KEYS = ("slug", "path", "score")

GateFunction = Callable[..., Any]


def gate_of(plugin: object) -> tuple[PluginHost, GateFunction]:
    """A strict host holding ``plugin`` and a call of the plugin's ``gate_capture`` alone."""
    host = strict_host((CONTRACT_PLUGIN_NAME, plugin))
    assert "gate_capture" in hooks_of(host, CONTRACT_PLUGIN_NAME), (
        "the plugin does not implement gate_capture"
    )
    impls = [
        impl
        for impl in host.hook.gate_capture.get_hookimpls()
        if impl.plugin_name == CONTRACT_PLUGIN_NAME
    ]
    assert len(impls) == 1, f"expected one gate_capture implementation, found {len(impls)}"

    def gate(**kwargs: Any) -> Any:
        # through pluggy, the plugin alone: it passes only the arguments the hook declares
        return host.call_plugin("gate_capture", CONTRACT_PLUGIN_NAME, **kwargs)

    return host, gate


def check_stop(stop: object) -> None:
    """Assert ``stop`` is a well-formed ``GateStop``."""
    assert isinstance(stop, GateStop), f"a stopping gate must return a GateStop, got {stop!r}"
    assert isinstance(stop.reason, str) and stop.reason.strip(), "GateStop.reason is empty"
    for candidate in stop.candidates:
        assert isinstance(candidate, Mapping), f"candidate {candidate!r} is not a mapping"
        missing = [key for key in CANDIDATE_KEYS if key not in candidate]
        assert not missing, f"candidate {dict(candidate)!r} lacks {missing}"
        assert isinstance(candidate["slug"], str) and candidate["slug"], candidate
        assert isinstance(candidate["path"], str) and candidate["path"], candidate
        score = candidate["score"]
        assert isinstance(score, (int, float)) and not isinstance(score, bool), candidate


class GateContract:
    """Contract tests for the ``gate_capture`` policy hook.

    Fixtures to override (all required but ``gate_context``):

    * ``gate_plugin`` -> the plugin object (module) implementing ``gate_capture``.
    * ``gate_context`` -> the ``ctx`` the gate consults (a vault, an entity index...);
      ``None`` by default.
    * ``passing_request`` -> a ``CaptureRequest`` the gate must let through.
    * ``stopping_request`` -> a ``CaptureRequest`` the gate must stop.

    Checks: the passing request gives ``None``; the stopping one a ``GateStop`` with a
    reason and candidates that are mappings holding ``slug`` (str), ``path`` (str) and
    ``score`` (number); answers are deterministic and the same through a host.
    """

    @pytest.fixture
    def gate_plugin(self) -> object:
        raise NotImplementedError("override `gate_plugin` to return your gate plugin")

    @pytest.fixture
    def gate_context(self) -> Any:
        return None

    @pytest.fixture
    def passing_request(self) -> CaptureRequest:
        raise NotImplementedError("override `passing_request` with a request the gate allows")

    @pytest.fixture
    def stopping_request(self) -> CaptureRequest:
        raise NotImplementedError("override `stopping_request` with a request the gate stops")

    def test_passing_request_is_let_through(
        self, gate_plugin: object, gate_context: Any, passing_request: CaptureRequest
    ) -> None:
        _, gate = gate_of(gate_plugin)
        answer = gate(request=passing_request, ctx=gate_context)
        assert answer is None, f"the gate stopped a request it must allow: {answer!r}"

    def test_stopping_request_is_stopped_with_candidates(
        self, gate_plugin: object, gate_context: Any, stopping_request: CaptureRequest
    ) -> None:
        _, gate = gate_of(gate_plugin)
        check_stop(gate(request=stopping_request, ctx=gate_context))

    def test_answers_are_deterministic(
        self,
        gate_plugin: object,
        gate_context: Any,
        passing_request: CaptureRequest,
        stopping_request: CaptureRequest,
    ) -> None:
        _, gate = gate_of(gate_plugin)
        for request in (stopping_request, passing_request, stopping_request):
            first = gate(request=request, ctx=gate_context)
            assert gate(request=request, ctx=gate_context) == first, (
                f"the gate answered {request.title!r} differently on a second call"
            )

    def test_host_gives_the_same_answers(
        self,
        gate_plugin: object,
        gate_context: Any,
        passing_request: CaptureRequest,
        stopping_request: CaptureRequest,
    ) -> None:
        host, gate = gate_of(gate_plugin)
        for request in (passing_request, stopping_request):
            direct = gate(request=request, ctx=gate_context)
            via_host = host.hook.gate_capture(request=request, ctx=gate_context)
            assert via_host == direct, (
                f"through the host the gate answered {via_host!r}, directly {direct!r}"
            )
