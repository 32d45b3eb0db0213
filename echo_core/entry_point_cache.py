"""Which plugins are installed, remembered between runs so a start-up need not scan every
installed distribution (``importlib.metadata`` costs ~15 ms before it finds one).

``installed_plugins(group, core)`` returns the entry points of ``group`` (name, value,
distribution name and version) and the version of the distribution ``core``. They are
read from ``$XDG_CACHE_HOME/echo-memory/entry-points-<group>.json`` (default
``~/.cache/echo-memory/``) when that file was written for the same environment: the same
interpreter (``sys.version``, ``sys.prefix``, ``sys.executable``) and the same
``sys.path``, each entry with the ``st_mtime_ns`` it had then. Installing, upgrading or
uninstalling a distribution adds or removes a ``*.dist-info`` folder, which changes its
site directory's mtime, so the next start scans again. Otherwise (no file, no entry for
this key, a file that cannot be read or parsed, ``ECHO_PLUGIN_CACHE=off``) the entry
points come from ``importlib.metadata`` and the file is rewritten atomically (temp file +
``os.replace``) with this key's entry first (the ``KEPT`` newest environments are kept);
a cache folder that cannot be written is no error. A hit never imports
``importlib.metadata``.

The file decides discovery only: what a plugin is and does is always its imported code.
A cached entry point that fails to import is recorded as failed like any other, and the
file is removed (``forget``) so the next start scans again. Not seen by the key:
distributions that a custom ``sys.meta_path`` finder provides apart from ``sys.path``, and
a ``*.dist-info`` edited in place (no install tool does either); set
``ECHO_PLUGIN_CACHE=off`` there.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import sys
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

#: Bumped when the file's layout changes: a file of another format is a miss.
FORMAT = 1
CACHE_ENV = "ECHO_PLUGIN_CACHE"
#: A path entry modified this recently (ns) may change again within the file system's
#: timestamp granularity without its mtime changing: the result is then not written.
RACY_NS = 2_000_000_000
#: Environments remembered per file (a user may run echo-memory from a few venvs).
KEPT = 8
_OFF = frozenset({"0", "off", "false", "no"})


class InstalledEntryPoint(NamedTuple):
    """One entry point: ``value`` is ``module`` or ``module:attr``; ``dist`` is its
    distribution's name as its metadata spells it (None when unknown), ``version`` its
    version ("" when unknown). (Named tuples, not attrs classes, here: this module is on
    every start-up's path and an attrs class costs ~0.4 ms to define.)"""

    name: str
    value: str
    dist: str | None = None
    version: str = ""

    def load(self) -> Any:
        """Import the module and return the attribute named (as ``EntryPoint.load``);
        raises what the import raises, ``ValueError`` for a malformed value."""
        module_part, _, attr_part = self.value.partition(":")
        module_name = module_part.split("[", 1)[0].strip()
        attr_path = attr_part.split("[", 1)[0].strip()
        if not _dotted(module_name) or (attr_path and not _dotted(attr_path)):
            raise ValueError(f"malformed entry point {self.name} = {self.value!r}")
        module = importlib.import_module(module_name)
        return functools.reduce(getattr, filter(None, attr_path.split(".")), module)


class InstalledPlugins(NamedTuple):
    """What ``installed_plugins`` found: the entry points in ``importlib.metadata``'s order,
    the core distribution's version, and whether they came from the cache file."""

    entry_points: tuple[InstalledEntryPoint, ...]
    core_version: str = ""
    from_cache: bool = False


def _dotted(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))


def cache_enabled(env: Mapping[str, str]) -> bool:
    """False when ``ECHO_PLUGIN_CACHE`` is ``off`` (or 0/false/no): read from ``env`` when
    it holds the key, else from the process environment."""
    raw = env[CACHE_ENV] if CACHE_ENV in env else os.environ.get(CACHE_ENV, "")
    return raw.strip().lower() not in _OFF


def cache_dir() -> str | None:
    """``$XDG_CACHE_HOME/echo-memory``, else ``$HOME/.cache/echo-memory`` (from the process
    environment: where the cache lives is a property of the process, like ``sys.path``);
    None when neither is known."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        home = os.environ.get("HOME") or os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "echo-memory")


def cache_file(group: str) -> str | None:
    """The cache file of ``group`` (None for a group name unfit for a file name)."""
    folder = cache_dir()
    if folder is None or not group or not all(c.isalnum() or c in "_.-" for c in group):
        return None
    return os.path.join(folder, f"entry-points-{group}.json")


def environment_key(group: str, core: str) -> dict[str, Any]:
    """What the cached answer depends on (as JSON values, to compare with a read file)."""
    paths: list[list[Any]] = []
    for entry in sys.path:
        try:
            path = os.path.abspath(os.fsdecode(entry) or ".")
        except TypeError:
            continue  # not a path: importlib.metadata skips it too
        try:
            mtime: int | None = os.stat(path).st_mtime_ns
        except (OSError, ValueError):
            mtime = None
        paths.append([path, mtime])
    return {"format": FORMAT, "group": group, "core": core, "python": sys.version,
            "prefix": sys.prefix, "executable": sys.executable, "path": paths}


def installed_plugins(group: str, core: str, *,
                      env: Mapping[str, str] | None = None) -> InstalledPlugins:
    """The entry points of ``group`` and the version of distribution ``core``: from the
    cache file when it matches this environment, else from ``importlib.metadata`` (then
    the file is rewritten). ``env`` is read for ``ECHO_PLUGIN_CACHE`` only."""
    path = cache_file(group)
    if path is None or not cache_enabled(os.environ if env is None else env):
        return scan(group, core)
    key = environment_key(group, core)
    cached = _read(path, key)
    if cached is not None:
        return cached
    found = scan(group, core)
    _write(path, key, found)
    return found


def forget(group: str) -> None:
    """Remove the cache file of ``group`` (the next start scans again); never raises."""
    path = cache_file(group)
    if path is not None:
        try:
            os.unlink(path)
        except OSError:
            pass


def scan(group: str, core: str) -> InstalledPlugins:
    """The entry points of ``group`` and ``core``'s version, from ``importlib.metadata``
    (each distribution's metadata parsed once)."""
    from importlib import metadata

    known: dict[str, tuple[str, str]] = {}
    found = []
    for ep in metadata.entry_points(group=group):
        dist, version = _dist_name_version(ep.dist, known)
        found.append(InstalledEntryPoint(ep.name, ep.value, dist, version))
    try:
        core_version = metadata.version(core)
    except metadata.PackageNotFoundError:
        core_version = ""
    return InstalledPlugins(tuple(found), core_version)


def _dist_name_version(dist: Any, known: dict[str, tuple[str, str]]) -> tuple[str | None, str]:
    """``(name, version)`` of an entry point's distribution, its metadata parsed once per
    distribution (``Distribution.name`` / ``.version`` re-read the file on every access):
    ``(None, "")`` when unknown."""
    if dist is None:
        return None, ""
    key = str(getattr(dist, "_path", id(dist)))
    if key not in known:
        meta = dist.metadata
        known[key] = (meta["Name"] or "?", meta["Version"] or "")
    return known[key]


def _read(path: str, key: Mapping[str, Any]) -> InstalledPlugins | None:
    """The cached answer for ``key`` in the file at ``path``; None when it holds none."""
    try:
        for entry in _entries(path):
            if entry.get("key") == key:
                entry_points = tuple(
                    InstalledEntryPoint(_text(e["name"]), _text(e["value"]),
                                        _optional_text(e["dist"]), _text(e["version"]))
                    for e in entry["entry_points"])
                return InstalledPlugins(entry_points, _text(entry["core_version"]),
                                        from_cache=True)
    except (ValueError, TypeError, KeyError, AttributeError):
        pass
    return None


def _entries(path: str) -> list[Any]:
    """The entries of the file at ``path``, newest first ([] when it is missing, cannot
    be read or is not a cache file)."""
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return []
    entries = data.get("entries") if isinstance(data, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _optional_text(value: object) -> str | None:
    return None if value is None else _text(value)


def _write(path: str, key: Mapping[str, Any], found: InstalledPlugins) -> None:
    """Put ``found`` first in the file at ``path`` (keeping the ``KEPT - 1`` newest other
    environments' entries), atomically. Skipped when a path entry changed too recently
    to be told apart by its mtime, or when the folder cannot be written."""
    now = time.time_ns()
    if any(mtime is not None and now - mtime < RACY_NS for _, mtime in key["path"]):
        return
    from echo_core.tempfiles import sweep_stale, temp_name

    entry = {"key": key, "core_version": found.core_version,
             "entry_points": [{"name": e.name, "value": e.value, "dist": e.dist,
                               "version": e.version} for e in found.entry_points]}
    others = [e for e in _entries(path) if e.get("key") != key][:KEPT - 1]
    folder = os.path.dirname(path)
    temp = os.path.join(folder, temp_name(os.path.basename(path)))
    try:
        os.makedirs(folder, exist_ok=True)
        sweep_stale(folder)
        with open(temp, "x", encoding="utf-8") as handle:
            json.dump({"entries": [entry, *others]}, handle, indent=1)
        os.replace(temp, path)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass
