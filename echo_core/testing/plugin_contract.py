"""``PluginContract``: what every echo-memory plugin must do to load cleanly (DESIGN §2).

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the two fixtures::

    from echo_core.testing import PluginContract
    import plugins.recall_bm25 as recall_bm25

    class TestRecallBm25Plugin(PluginContract):
        @pytest.fixture
        def plugin(self):
            return recall_bm25

        @pytest.fixture
        def plugin_name(self):
            return "recall_bm25"

The module also offers ``strict_host`` and ``hooks_of``, shared by the other suites.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from echo_core.errors import EchoError
from echo_core.hookspecs import PROJECT
from echo_core.plugins import PluginHost, create_host

#: Name under which ``strict_host`` registers the plugin by default.
CONTRACT_PLUGIN_NAME = "contract_plugin"


def strict_host(*plugins: tuple[str, object]) -> PluginHost:
    """A fresh strict host with only the core defaults and ``plugins`` (no entry points).

    Uses an empty environment, so ``ECHO_DISABLE_PLUGINS`` cannot interfere. A plugin the
    host rejects (bad hookimpl, misspelled hook) becomes an ``AssertionError``.
    """
    try:
        return create_host(load_entry_points=False, strict=True, env={}, extra=list(plugins))
    except EchoError as exc:
        raise AssertionError(f"the plugin host rejected the plugin: {exc.message}") from exc


def hooks_of(host: PluginHost, name: str) -> set[str]:
    """Names of the hooks that the plugin registered as ``name`` implements."""
    record = host.records[name]
    assert record.status == "ok", f"plugin {name!r} is {record.status}: {record.error}"
    return set(record.hooks)


def registered_names(host: PluginHost, hook_name: str, plugin_name: str) -> list[str]:
    """Every name one plugin passes to ``register`` in ``hook_name``, in call order.

    Duplicates are kept, so a caller can see them (the host would reject them).
    """
    names: list[Any] = []

    def register(name: Any, obj: Any, /) -> None:
        names.append(name)

    if plugin_name in host.implementers(hook_name):
        host.call_plugin(hook_name, plugin_name, register=register)
    return names


def twin_of(host: PluginHost, plugin: object) -> SimpleNamespace:
    """A distinct plugin object carrying the same hookimpls as ``plugin``.

    pluggy refuses to register one object twice, so a second registration needs a copy.
    """
    found = {
        attr: getattr(plugin, attr)
        for attr in dir(plugin)
        if host.pm.parse_hookimpl_opts(plugin, attr) is not None
    }
    return SimpleNamespace(**found)


class PluginContract:
    """Contract tests for any plugin (a module or object holding hookimpls).

    Fixtures to override:

    * ``plugin`` -> the plugin object exactly as the entry point loads it (usually the
      module). Required.
    * ``plugin_name`` -> its entry-point name (``"recall_bm25"``). Required.

    Checks: it loads in a strict host; every hookimpl names a real hookspec; each
    ``register_*`` callback hook registers only non-empty string names, none twice; and a
    second copy of the plugin makes ``collect`` fail with an ``EchoError`` naming both.
    """

    #: Name of the second copy registered by ``test_registering_twice_is_a_conflict``.
    twin_name = "contract_twin"

    @pytest.fixture
    def plugin(self) -> object:
        raise NotImplementedError("override the `plugin` fixture to return your plugin")

    @pytest.fixture
    def plugin_name(self) -> str:
        raise NotImplementedError("override the `plugin_name` fixture (the entry-point name)")

    def test_registers_in_a_strict_host(self, plugin: object, plugin_name: str) -> None:
        host = strict_host((plugin_name, plugin))
        record = host.records.get(plugin_name)
        assert record is not None, f"plugin {plugin_name!r} was not recorded by the host"
        assert record.status == "ok", f"plugin {plugin_name!r} is {record.status}: {record.error}"
        assert plugin_name in host.plugin_names()

    def test_implements_at_least_one_hook(self, plugin: object, plugin_name: str) -> None:
        host = strict_host((plugin_name, plugin))
        assert hooks_of(host, plugin_name), (
            f"plugin {plugin_name!r} implements no hook; is the entry point the module that "
            f"defines (or imports) the @hookimpl functions?"
        )

    def test_every_hookimpl_names_a_hookspec(self, plugin: object, plugin_name: str) -> None:
        host = strict_host((plugin_name, plugin))
        host.check_pending()
        marker = f"{PROJECT}_impl"
        for attr in dir(plugin):
            opts = host.pm.parse_hookimpl_opts(plugin, attr)
            if opts is None:
                continue
            hook_name = opts.get("specname") or attr
            caller = getattr(host.hook, hook_name, None)
            assert caller is not None and caller.spec is not None, (
                f"{plugin_name}.{attr} is marked {marker} but {hook_name!r} is no hookspec"
            )

    def test_registration_names_are_non_empty_and_unique(
        self, plugin: object, plugin_name: str
    ) -> None:
        host = strict_host((plugin_name, plugin))
        implemented = hooks_of(host, plugin_name)
        problems = [p.message for p in host.check_registrations()]
        assert not problems, f"{plugin_name}: registration problems: {'; '.join(problems)}"
        for hook_name in host.registration_hooks():
            if hook_name not in implemented:
                continue
            names = registered_names(host, hook_name, plugin_name)
            for name in names:
                assert isinstance(name, str) and name.strip(), (
                    f"{hook_name}: {plugin_name} registered a bad name {name!r}"
                )
            twice = sorted({n for n in names if names.count(n) > 1})
            assert not twice, f"{hook_name}: {plugin_name} registered {twice} more than once"
            try:
                collected = host.collect(hook_name)
            except EchoError as exc:
                raise AssertionError(f"{hook_name}: collect failed: {exc.message}") from exc
            missing = set(names) - set(collected)
            assert not missing, f"{hook_name}: {sorted(missing)} missing from collect()"

    def test_registering_twice_is_a_conflict(self, plugin: object, plugin_name: str) -> None:
        host = strict_host((plugin_name, plugin))
        implemented = hooks_of(host, plugin_name)
        hooks = [h for h in host.registration_hooks() if h in implemented]
        if not hooks:
            bare = strict_host()
            for hook_name in bare.registration_hooks():
                assert set(host.collect(hook_name)) == set(bare.collect(hook_name)), (
                    f"{plugin_name} implements no register_* hook yet {hook_name} changed"
                )
            return
        doubled = strict_host((plugin_name, plugin), (self.twin_name, twin_of(host, plugin)))
        for hook_name in hooks:
            if not registered_names(host, hook_name, plugin_name):
                continue  # nothing registered here, so nothing can clash
            try:
                doubled.collect(hook_name)
            except EchoError as exc:
                message = exc.message
            else:
                raise AssertionError(f"{hook_name}: two copies of the plugin did not clash")
            assert repr(plugin_name) in message and repr(self.twin_name) in message, (
                f"{hook_name}: the conflict error must name both plugins, got: {message}"
            )
