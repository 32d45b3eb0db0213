"""The plugin host: loads entry points one by one, isolates broken plugins, validates
registrations.

No module-level manager: ``create_host()`` returns a fresh ``PluginHost`` and tests build
their own with ``create_host(load_entry_points=False)`` plus ``host.add(...)``.
"""

from __future__ import annotations

import importlib.metadata as importlib_metadata
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

import attrs
import pluggy

from echo_core import hookspecs
from echo_core.errors import EchoError, ExitCode

ENTRY_POINT_GROUP = "echo_memory"
CORE_PLUGIN_NAME = "echo_core"


@attrs.define
class PluginRecord:
    """What the host knows about one plugin, as shown by ``echo-memory plugins``."""

    name: str
    version: str = ""
    status: str = "ok"  # ok | failed | disabled
    error: str | None = None
    hooks: list[str] = attrs.field(factory=list)
    source: str = "entry-point"  # entry-point | explicit | core


def _env_flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def disabled_from_env(env: Mapping[str, str]) -> set[str]:
    """Plugin names blocked by ``ECHO_DISABLE_PLUGINS=a,b``."""
    return {p.strip() for p in env.get("ECHO_DISABLE_PLUGINS", "").split(",") if p.strip()}


class PluginHost:
    """A pluggy manager plus the bookkeeping the CLI and tests need.

    ``strict`` (``ECHO_STRICT_PLUGINS=1``) turns any plugin failure into an ``EchoError``
    at start-up instead of a recorded, skipped plugin.
    """

    def __init__(self, *, strict: bool = False, disabled: Iterable[str] = ()) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.strict = strict
        self.disabled = set(disabled)
        self.records: dict[str, PluginRecord] = {}
        self._collected: dict[str, dict[str, Any]] = {}
        self._owners: dict[str, dict[str, str]] = {}
        from echo_core import defaults

        self.pm.register(defaults, name=CORE_PLUGIN_NAME)
        self.records[CORE_PLUGIN_NAME] = PluginRecord(
            CORE_PLUGIN_NAME, _dist_version("echo-memory"), hooks=self._hooks_of(defaults),
            source="core",
        )

    @property
    def hook(self) -> Any:
        """The pluggy hook relay (``host.hook.on_note_written(note=..., ctx=...)``)."""
        return self.pm.hook

    # -- loading -------------------------------------------------------------------

    def add(self, name: str, plugin: object, *, version: str = "", source: str = "explicit") -> bool:
        """Register ``plugin`` (a module or object with hookimpls) under ``name``.

        Returns True when registered; a disabled name is recorded and skipped; a plugin
        that fails validation is recorded as failed (or raises when strict).
        """
        if name in self.disabled:
            self.records[name] = PluginRecord(name, version, status="disabled", source=source)
            return False
        try:
            self.pm.register(plugin, name=name)
        except Exception as exc:  # pluggy validation, duplicate names, ...
            self.record_failure(name, version, source, exc)
            return False
        self.records[name] = PluginRecord(name, version, hooks=self._hooks_of(plugin), source=source)
        self._collected.clear()
        return True

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> None:
        """Import and register every entry point of ``group``, one at a time.

        A plugin that fails to import or register is recorded with its error and skipped.
        """
        eps = sorted(importlib_metadata.entry_points(group=group), key=lambda e: e.name)
        for ep in eps:
            version = ep.dist.version if ep.dist is not None else ""
            if ep.name in self.disabled:
                self.records[ep.name] = PluginRecord(ep.name, version, status="disabled")
                continue
            if ep.name in self.records:
                continue
            try:
                plugin = ep.load()
            except Exception as exc:
                self.record_failure(ep.name, version, "entry-point", exc)
                continue
            self.add(ep.name, plugin, version=version, source="entry-point")

    def check_pending(self) -> None:
        """Reject hookimpls that match no hookspec (a misspelled hook is an error).

        The offending plugin is unregistered and recorded as failed (raises when strict).
        """
        while True:
            try:
                self.pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                name = self.pm.get_name(exc.plugin) or repr(exc.plugin)
                record = self.records.get(name)
                self.pm.unregister(exc.plugin)
                self.record_failure(name, record.version if record else "", record.source if record else "explicit", exc)

    def record_failure(self, name: str, version: str, source: str, exc: BaseException) -> None:
        """Record ``name`` as failed with ``exc`` (raises ``EchoError`` when strict)."""
        message = f"{type(exc).__name__}: {exc}"
        self.records[name] = PluginRecord(name, version, status="failed", error=message, source=source)
        if self.strict:
            raise EchoError(
                f"plugin {name!r} failed to load: {message}. Fix or uninstall it, or run "
                f"without ECHO_STRICT_PLUGINS=1 to skip it.",
                ExitCode.FAILURE,
            ) from exc
        if os.environ.get("ECHO_DEBUG_PLUGINS"):
            traceback.print_exception(exc, file=sys.stderr)

    def _hooks_of(self, plugin: object) -> list[str]:
        callers = self.pm.get_hookcallers(plugin) if self.pm.is_registered(plugin) else None
        return sorted(c.name for c in callers or [])

    # -- registration hooks --------------------------------------------------------

    def collect(self, hook_name: str) -> dict[str, Any]:
        """Call the registration hook ``hook_name`` once per plugin and return name -> obj.

        A name registered by two plugins raises ``EchoError`` naming both. A plugin whose
        hook raises is recorded as failed and its registrations dropped (raises if strict).
        The result is cached until another plugin is added.
        """
        if hook_name in self._collected:
            return self._collected[hook_name]
        caller = getattr(self.pm.hook, hook_name)
        found: dict[str, Any] = {}
        owner: dict[str, str] = {}
        for impl in reversed(caller.get_hookimpls()):  # registration order
            plugin_name = impl.plugin_name
            mine: dict[str, Any] = {}

            def register(name: str, obj: Any, /, _mine: dict[str, Any] = mine) -> None:
                if not isinstance(name, str) or not name:
                    raise EchoError(f"{hook_name}: names must be non-empty strings, got {name!r}")
                if name in _mine:
                    raise EchoError(
                        f"{hook_name}: plugin {plugin_name!r} registered {name!r} twice",
                        ExitCode.FAILURE,
                    )
                _mine[name] = obj

            try:
                impl.function(**{arg: register for arg in impl.argnames})
            except Exception as exc:
                self.record_failure(plugin_name, self._version(plugin_name), self._source(plugin_name), exc)
                continue
            for name, obj in mine.items():
                if name in found:
                    raise EchoError(
                        f"{hook_name}: {name!r} is registered by both plugin {owner[name]!r} "
                        f"and plugin {plugin_name!r}; disable one of them "
                        f"(ECHO_DISABLE_PLUGINS={plugin_name} or config 'disabled').",
                        ExitCode.FAILURE,
                    )
                found[name] = obj
                owner[name] = plugin_name
        self._collected[hook_name] = found
        self._owners[hook_name] = owner
        return found

    def owner_of(self, hook_name: str, name: str) -> str:
        """The plugin that registered ``name`` through ``hook_name`` ("" when unknown)."""
        self.collect(hook_name)
        return self._owners.get(hook_name, {}).get(name, "")

    def _version(self, name: str) -> str:
        rec = self.records.get(name)
        return rec.version if rec else ""

    def _source(self, name: str) -> str:
        rec = self.records.get(name)
        return rec.source if rec else "explicit"

    def plugin_names(self) -> list[str]:
        """Names of registered (working) plugins."""
        return sorted(n for n, r in self.records.items() if r.status == "ok")

    def failed(self) -> list[PluginRecord]:
        """Plugins that failed to import, register or validate."""
        return [r for r in self.records.values() if r.status == "failed"]


def _dist_version(dist: str) -> str:
    try:
        return importlib_metadata.version(dist)
    except importlib_metadata.PackageNotFoundError:
        return ""


def create_host(
    *,
    load_entry_points: bool = True,
    disabled: Iterable[str] = (),
    strict: bool | None = None,
    env: Mapping[str, str] | None = None,
    extra: Iterable[tuple[str, ModuleType | object]] = (),
) -> PluginHost:
    """Build a plugin host: core defaults, entry points (unless disabled), ``extra``.

    ``disabled`` adds to ``ECHO_DISABLE_PLUGINS``; ``strict`` defaults to
    ``ECHO_STRICT_PLUGINS``. ``check_pending()`` runs last.
    """
    env = os.environ if env is None else env
    if strict is None:
        strict = _env_flag(env, "ECHO_STRICT_PLUGINS")
    host = PluginHost(strict=strict, disabled=set(disabled) | disabled_from_env(env))
    if load_entry_points:
        host.load_entry_points()
    for name, plugin in extra:
        host.add(name, plugin)
    host.check_pending()
    return host


HostFactory = Callable[[], PluginHost]
