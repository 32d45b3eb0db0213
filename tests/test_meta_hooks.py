"""Every hookspec has a contract suite in ``echo_core.testing`` (DESIGN §4)."""

from __future__ import annotations

import inspect

import pytest

import echo_core.testing
from echo_core import hookspecs
from echo_core.testing import CONTRACT_SUITES

SPEC_MARKER = f"{hookspecs.PROJECT}_spec"  # "echo_memory_spec", set by @hookspec

HOOKSPEC_NAMES = sorted(
    name for name, value in vars(hookspecs).items() if hasattr(value, SPEC_MARKER)
)


def test_hookspecs_are_found() -> None:
    assert "register_storage" in HOOKSPEC_NAMES
    assert "gate_capture" in HOOKSPEC_NAMES


@pytest.mark.parametrize("hook_name", HOOKSPEC_NAMES)
def test_every_hookspec_has_a_contract_suite(hook_name: str) -> None:
    assert hook_name in CONTRACT_SUITES, f"hookspec {hook_name!r} has no contract suite"
    suite_name = CONTRACT_SUITES[hook_name]
    suite = getattr(echo_core.testing, suite_name, None)
    assert inspect.isclass(suite), f"{suite_name} (for {hook_name}) is not in echo_core.testing"
    assert not suite_name.startswith("Test"), f"{suite_name} would be collected on its own"
    assert suite_name in echo_core.testing.__all__
    assert any(n.startswith("test_") for n in dir(suite)), f"{suite_name} has no tests"


@pytest.mark.parametrize("hook_name", HOOKSPEC_NAMES)
def test_every_hookspec_docstring_names_its_suite(hook_name: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, hook_name)) or ""
    assert CONTRACT_SUITES[hook_name] in doc, f"{hook_name}'s docstring does not name its suite"


def test_contract_suites_names_only_real_hookspecs() -> None:
    assert set(CONTRACT_SUITES) == set(HOOKSPEC_NAMES)


#: Hooks whose built-in implementation arrives with a later issue. The test below fails as
#: soon as one gains an implementation, so this list can only shrink.
PENDING_BUILTINS = {
    "on_session_start": "issue 5 (load)",
    "on_session_end": "issue 5 (session-end)",
}


#: Hooks the core's own plugin implements for real (not a ``trylast`` default): the core's
#: verbs register through ``register_operations`` like any plugin's.
CORE_IMPLEMENTS = {"register_operations"}

#: Hooks no built-in plugin needs to implement: the core itself keeps the active ranker
#: current on note writes and deletions (``echo_core.ranker_upkeep``); these events are
#: for third-party listeners (their suite, ``EventsContract``, runs in test_contract_suites).
FOR_THIRD_PARTIES = {
    "on_note_written": "the core keeps the ranker current",
    "on_note_deleted": "the core keeps the ranker current",
}


def _builtin_implementations() -> dict[str, set[str]]:
    from echo_core.plugins import create_host

    host = create_host(env={}, strict=True)
    found: dict[str, set[str]] = {}
    for name in HOOKSPEC_NAMES:
        impls = getattr(host.pm.hook, name).get_hookimpls()
        found[name] = {i.plugin_name for i in impls
                       if i.plugin_name != "echo_core" or name in CORE_IMPLEMENTS}
    return found


def test_every_hookspec_has_a_builtin_implementation_or_is_pending() -> None:
    found = _builtin_implementations()
    missing = sorted(n for n, plugins in found.items()
                     if not plugins and n not in PENDING_BUILTINS and n not in FOR_THIRD_PARTIES)
    assert missing == []


def test_pending_list_only_names_hooks_still_without_builtins() -> None:
    found = _builtin_implementations()
    stale = sorted(n for n in PENDING_BUILTINS if found.get(n))
    assert stale == [], f"remove {stale} from PENDING_BUILTINS: they have built-ins now"
