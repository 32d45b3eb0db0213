"""The plugin host: loads entry points one by one, isolates broken plugins, validates
registrations.

No module-level manager: ``create_host()`` returns a fresh ``PluginHost`` and tests build
their own with ``create_host(load_entry_points=False)`` plus ``host.add(...)``.

Every hook call, the host's own included, goes through pluggy (so hook-call monitoring
and ``ECHO_TRACE_PLUGINS=1`` see them all). A plugin that fails (import, validation, a
raising registration hook) is unregistered and blocked: none of its hooks fire afterwards.

``PluginRecord`` is a ``NamedTuple``, not attrs (house style's exception for the start-up
path, issue 15): every start-up, ``--help`` included, records each plugin, and importing
attrs costs ~10 ms of a ~75 ms ``--help``.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Collection, Iterable, Mapping
from types import ModuleType
from typing import Any, NamedTuple

import pluggy

from echo_core import hookspecs
from echo_core.entry_point_cache import (
    InstalledEntryPoint,
    InstalledPlugins,
    forget,
    installed_plugins,
)
from echo_core.errors import EchoError, ExitCode
from echo_core.registrations import (
    NO_VALIDATORS,
    GatheredRegistrations,
    RegistrationProblem,
    RegistrationValidator,
    duplicate,
)

ENTRY_POINT_GROUP = "echo_memory"
CORE_PLUGIN_NAME = "echo_core"
CORE_DISTRIBUTION = "echo-memory"


class PluginRecord(NamedTuple):
    """What the host knows about one plugin, as shown by ``echo-memory plugins``.

    Immutable and compared by value; a plugin's changed state is a new record. ``hooks``
    defaults to one shared empty list: never append to a record's list.
    """

    name: str
    version: str = ""
    status: str = "ok"  # ok | failed | disabled
    error: str | None = None
    hooks: list[str] = []  # noqa: RUF012 - shared: records are replaced, never changed
    source: str = "entry-point"  # entry-point | explicit | core


def _env_flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def disabled_from_env(env: Mapping[str, str]) -> set[str]:
    """Plugin names blocked by ``ECHO_DISABLE_PLUGINS=a,b``."""
    return {p.strip() for p in env.get("ECHO_DISABLE_PLUGINS", "").split(",") if p.strip()}


def distribution_key(name: str) -> str:
    """A distribution name normalised as PEP 503 does (``Echo_Memory`` -> ``echo-memory``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def plugin_dists_from_env(env: Mapping[str, str]) -> frozenset[str] | None:
    """Distributions allowed by ``ECHO_PLUGIN_DISTS=echo-memory,other``; None: all of them.

    Read from ``env`` when it holds the key, else from the process environment (a switch
    about what is installed, so a test passing ``env={}`` stays hermetic). Empty: all.
    """
    raw = env["ECHO_PLUGIN_DISTS"] if "ECHO_PLUGIN_DISTS" in env else os.environ.get(
        "ECHO_PLUGIN_DISTS", "")
    names = {distribution_key(p.strip()) for p in raw.split(",") if p.strip()}
    return frozenset(names) if names else None


class PluginHost:
    """A pluggy manager plus the bookkeeping the CLI and tests need.

    ``strict`` (``ECHO_STRICT_PLUGINS=1``) turns any plugin failure into an ``EchoError``
    at start-up instead of a recorded, skipped plugin.
    """

    def __init__(self, *, strict: bool = False, disabled: Iterable[str] = (),
                 core_version: str | None = None) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.strict = strict
        self.disabled = set(disabled)
        self.records: dict[str, PluginRecord] = {}
        self._gathered: dict[str, GatheredRegistrations] = {}
        #: Bumped whenever a plugin is added or fails: anything derived from the
        #: registrations (the operation registry) is stale once it changes.
        self.generation = 0
        self._reported: list[RegistrationProblem] = []
        self._dist_of: dict[str, str] = {}  # entry-point name -> its distribution
        from echo_core import defaults

        self.pm.register(defaults, name=CORE_PLUGIN_NAME)
        self.records[CORE_PLUGIN_NAME] = PluginRecord(
            CORE_PLUGIN_NAME, _dist_version(CORE_DISTRIBUTION) if core_version is None
            else core_version, hooks=self._hooks_of(defaults),
            source="core",
        )

    @property
    def hook(self) -> Any:
        """The pluggy hook relay (``host.hook.on_note_written(note=..., ctx=...)``)."""
        return self.pm.hook

    # -- loading -------------------------------------------------------------------

    def add(self, name: str, plugin: object, *, version: str = "", source: str = "explicit") -> bool:
        """Register ``plugin`` (a module or object with hookimpls) under ``name``.

        Returns True when registered (an unhashable ``plugin`` through a hashable view of
        its hookimpls); a disabled name is recorded and skipped; a plugin
        that fails validation is recorded as failed (or raises when strict); a name blocked
        after a failure stays failed.
        """
        if name in self.disabled:
            self.records[name] = PluginRecord(name, version, status="disabled", source=source)
            return False
        if self.pm.is_blocked(name):
            return False
        if self.pm.has_plugin(name):
            self._reported_once(RegistrationProblem(
                "duplicate", "plugin names", name, (name,),
                f"two plugins are named {name!r}; the second ({source}) is not registered: "
                f"rename or uninstall one"))
            return False
        try:
            registered = _hashable(self.pm, plugin)
            self.pm.register(registered, name=name)
        except Exception as exc:  # noqa: BLE001 - pluggy validation, a bad hookimpl, ...
            self.record_failure(name, version, source, exc)
            return False
        self.records[name] = PluginRecord(name, version, hooks=self._hooks_of(registered),
                                          source=source)
        self._gathered.clear()
        self.generation += 1
        return True

    def load_entry_points(
        self, group: str = ENTRY_POINT_GROUP, *, dists: Collection[str] | None = None,
        installed: InstalledPlugins | None = None,
    ) -> None:
        """Import and register every entry point of ``group``, one at a time.

        The entry points are ``installed``'s, else ``installed_plugins(group)``'s (the
        cache of ``echo_core.entry_point_cache``, else ``importlib.metadata``). With
        ``dists`` (normalised distribution names, see ``distribution_key``) only the entry
        points of those distributions are considered; the others are not loaded nor
        listed. A plugin that fails to import or register is recorded with its error and
        skipped (and a cached listing is dropped, so the next start scans again).
        """
        if installed is None:
            installed = installed_plugins(group, CORE_DISTRIBUTION)
        for ep in sorted(installed.entry_points, key=lambda e: e.name):
            dist, version = ep.dist or "?", ep.version
            if dists is not None and (ep.dist is None or distribution_key(dist) not in dists):
                continue
            if ep.name in self.disabled:
                self.records[ep.name] = PluginRecord(ep.name, version, status="disabled")
                continue
            if ep.name in self.records:
                first = self._dist_of.get(ep.name, dist)
                if distribution_key(first) != distribution_key(dist):
                    self._reported_once(RegistrationProblem(
                        "duplicate", ENTRY_POINT_GROUP, ep.name, (first, dist),
                        f"entry point {ep.name!r} is provided by both distribution {first!r} "
                        f"and distribution {dist!r}; only the first is loaded: uninstall one"))
                continue
            self._dist_of[ep.name] = dist
            plugin = self._import(ep, installed, group)
            if plugin is not _FAILED:
                self.add(ep.name, plugin, version=version, source="entry-point")

    def _import(self, ep: InstalledEntryPoint, installed: InstalledPlugins, group: str) -> Any:
        """``ep``'s object, or ``_FAILED`` once its failure is recorded (raises when
        strict). A cached listing is forgotten first: it may be what is out of date."""
        try:
            return ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin is recorded, not fatal
            if installed.from_cache:
                forget(group)
            self.record_failure(ep.name, ep.version, "entry-point", exc)
            return _FAILED

    def check_pending(self) -> None:
        """Reject hookimpls that match no hookspec (a misspelled hook is an error).

        The offending plugin is unregistered, blocked and recorded as failed (raises when
        strict).
        """
        while True:
            try:
                self.pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                name = self.pm.get_name(exc.plugin) or repr(exc.plugin)
                self.fail_plugin(name, exc)

    def fail_plugin(self, name: str, exc: BaseException) -> None:
        """Mark the registered plugin ``name`` failed with ``exc``: unregister and block it.

        None of its hooks fire afterwards and what it registered is dropped from every
        ``collect`` (raises ``EchoError`` when strict, after blocking).
        """
        record = self.records.get(name)
        self.record_failure(name, record.version if record else "",
                            record.source if record else "explicit", exc)

    def record_failure(self, name: str, version: str, source: str, exc: BaseException) -> None:
        """Record ``name`` as failed with ``exc``, unregister and block it; raises
        ``EchoError`` when strict."""
        message = f"{type(exc).__name__}: {exc}"
        known = self.records.get(name)
        hooks = known.hooks if known else []
        self.pm.set_blocked(name)
        self._gathered.clear()
        self.generation += 1
        self.records[name] = PluginRecord(
            name, version, status="failed", error=message, hooks=hooks, source=source
        )
        if self.strict:
            raise EchoError(
                f"plugin {name!r} failed to load: {message}. Fix or uninstall it, or run "
                f"without ECHO_STRICT_PLUGINS=1 to skip it.",
                ExitCode.FAILURE,
            ) from exc
        if os.environ.get("ECHO_DEBUG_PLUGINS"):
            import traceback

            traceback.print_exception(exc, file=sys.stderr)

    def _hooks_of(self, plugin: object) -> list[str]:
        callers = self.pm.get_hookcallers(plugin) if self.pm.is_registered(plugin) else None
        return sorted(c.name for c in callers or [])

    # -- calling one plugin --------------------------------------------------------

    def implementers(self, hook_name: str) -> list[str]:
        """Names of the plugins implementing ``hook_name``, in pluggy's call order."""
        names: list[str] = []
        for impl in reversed(getattr(self.pm.hook, hook_name).get_hookimpls()):
            if impl.plugin_name not in names:
                names.append(impl.plugin_name)
        return names

    def call_plugin(self, hook_name: str, plugin_name: str, **kwargs: Any) -> Any:
        """Call ``hook_name`` on the plugin ``plugin_name`` alone, through pluggy.

        The result is pluggy's: a list of answers, or one answer for a firstresult hook.
        """
        others = [p for n, p in self.pm.list_name_plugin() if n != plugin_name and p is not None]
        return self.pm.subset_hook_caller(hook_name, remove_plugins=others)(**kwargs)

    # -- registration hooks --------------------------------------------------------

    def registration_hooks(self) -> list[str]:
        """Every hookspec'd ``register_*`` hook taking a ``register`` callback."""
        found = []
        for name, caller in vars(self.pm.hook).items():
            spec = getattr(caller, "spec", None)
            if name.startswith("register_") and spec is not None and "register" in spec.argnames:
                found.append(name)
        return sorted(found)

    def _gather(self, hook_name: str) -> GatheredRegistrations:
        """Call ``hook_name`` once per plugin (cached until a plugin is added or fails).

        A plugin whose hook raises is failed and blocked and its registrations dropped.
        """
        if hook_name in self._gathered:
            return self._gathered[hook_name]
        gathered = GatheredRegistrations(hook_name)
        for plugin_name in self.implementers(hook_name):
            mine: list[tuple[object, Any]] = []

            def register(name: object, obj: Any, /, _mine: list[tuple[object, Any]] = mine) -> None:
                _mine.append((name, obj))

            try:
                self.call_plugin(hook_name, plugin_name, register=register)
            except Exception as exc:  # noqa: BLE001 - a raising plugin is failed, not fatal
                self.fail_plugin(plugin_name, exc)
                continue
            gathered.add(plugin_name, mine)
        self._gathered[hook_name] = gathered
        return gathered

    def collect(self, hook_name: str) -> dict[str, Any]:
        """Call the registration hook ``hook_name`` once per plugin and return name -> obj.

        A name registered twice (by two plugins, or one plugin twice) raises ``EchoError``
        naming both; a malformed name is left out (``check_registrations`` reports it). A
        plugin whose hook raises is failed and blocked, its registrations dropped (raises
        if strict). The result is cached until a plugin is added or fails.
        """
        gathered = self._gather(hook_name)
        clashes = gathered.duplicates()
        if clashes:
            raise EchoError(clashes[0].message, ExitCode.FAILURE)
        return gathered.found

    def registrations(self, hook_name: str) -> dict[str, Any]:
        """``collect`` without raising: a name taken twice stays with its first owner
        (``check_registrations`` reports the clash, naming both)."""
        return dict(self._gather(hook_name).found)

    def report_duplicate(self, hook: str, name: str, first: str, second: str) -> RegistrationProblem:
        """Record ``name`` taken in ``hook`` by ``first`` and ``second``, found outside the
        ``register`` callback hooks (CLI commands); ``check_registrations`` returns it, like
        the plugin names and entry points taken twice that loading found."""
        return self._reported_once(duplicate(hook, name, first, second))

    def owner_of(self, hook_name: str, name: str) -> str:
        """The plugin that registered ``name`` through ``hook_name`` ("" when unknown)."""
        return self._gather(hook_name).owners.get(name, "")

    def _reported_once(self, problem: RegistrationProblem) -> RegistrationProblem:
        if problem not in self._reported:
            self._reported.append(problem)
        return problem

    def check_registrations(
        self, validators: Mapping[str, RegistrationValidator] = NO_VALIDATORS
    ) -> list[RegistrationProblem]:
        """Every registration problem, without raising: names taken twice, malformed names,
        what ``validators[hook](name, obj)`` refuses, and problems reported by other paths.

        Gathers each registration hook (``registration_hooks()``); ``register_commands``
        takes a click group and is checked where the CLI is built (``report_duplicate``).
        """
        while True:  # a plugin failing part-way drops what it registered: look again
            failures = len(self.failed())
            problems = list(self._reported)
            for hook_name in self.registration_hooks():
                gathered = self._gather(hook_name)
                problems.extend(gathered.problems)
                validator = validators.get(hook_name)
                if validator is not None:
                    problems.extend(gathered.validate(validator))
            if len(self.failed()) == failures:
                return problems

    def plugin_names(self) -> list[str]:
        """Names of registered (working) plugins."""
        return sorted(n for n, r in self.records.items() if r.status == "ok")

    def installed_by(self, name: str, dist: str) -> bool:
        """True when plugin ``name`` came from distribution ``dist`` (its entry point's,
        names compared as PEP 503 does; ``echo_core`` is the core's); False for a plugin
        added explicitly."""
        found = CORE_DISTRIBUTION if name == CORE_PLUGIN_NAME else self._dist_of.get(name)
        return found is not None and distribution_key(found) == distribution_key(dist)

    def failed(self) -> list[PluginRecord]:
        """Plugins that failed to import, register or validate."""
        return [r for r in self.records.values() if r.status == "failed"]


#: What ``PluginHost._import`` returns for an entry point that failed to import.
_FAILED = object()


class _PluginView:
    """A hashable stand-in carrying an unhashable plugin's hookimpls (pluggy's subset
    calls keep plugins in sets)."""

    def __init__(self, plugin: object) -> None:
        self._echo_plugin = plugin

    def __repr__(self) -> str:
        return repr(self._echo_plugin)


def _hashable(pm: pluggy.PluginManager, plugin: object) -> object:
    """``plugin`` itself, or a ``_PluginView`` of it when it cannot be hashed."""
    try:
        hash(plugin)
    except TypeError:
        view = _PluginView(plugin)
        for attr in dir(plugin):
            if pm.parse_hookimpl_opts(plugin, attr) is not None:
                setattr(view, attr, getattr(plugin, attr))
        return view
    return plugin


def _dist_version(dist: str) -> str:
    import importlib.metadata as importlib_metadata

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
    ``ECHO_STRICT_PLUGINS``. ``ECHO_PLUGIN_DISTS=echo-memory[,other-dist]`` loads only
    the entry points of the distributions listed (names compared normalised; the test
    suite sets it so installed third-party plugins stay out). ``ECHO_TRACE_PLUGINS=1``
    writes one stderr line per hook call. ``check_pending()`` runs last.
    """
    env = os.environ if env is None else env
    if strict is None:
        strict = _env_flag(env, "ECHO_STRICT_PLUGINS")
    installed = (installed_plugins(ENTRY_POINT_GROUP, CORE_DISTRIBUTION, env=env)
                 if load_entry_points else None)
    host = PluginHost(strict=strict, disabled=set(disabled) | disabled_from_env(env),
                      core_version=installed.core_version if installed else None)
    if _env_flag(env, "ECHO_TRACE_PLUGINS"):
        from echo_core.plugin_trace import trace_hook_calls

        trace_hook_calls(host.pm)
    if installed is not None:
        host.load_entry_points(dists=plugin_dists_from_env(env), installed=installed)
    for name, plugin in extra:
        host.add(name, plugin)
    host.check_pending()
    return host


HostFactory = Callable[[], PluginHost]
