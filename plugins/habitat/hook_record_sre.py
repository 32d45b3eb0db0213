"""Regular expressions for the hook recorder without importing ``re`` each time.

A cold ``python -S`` pays 5-9 ms to import ``re`` (with ``enum``, ``functools``...)
and ~1 ms per pattern to compile: most of a hook's budget. What ``re.compile`` hands
the C engine (``_sre.compile``: the flags, the compiled code, the groups) depends only
on the pattern and the interpreter, so ``PatternCache`` keeps it in a JSON file, made
with ``re``'s own compiler the first time a pattern is needed; later processes build
the same pattern object straight from ``_sre`` (a few microseconds, no ``re``).

The file (``$XDG_CACHE_HOME/echo-memory/habitat-hook-patterns.json``) is keyed by the
interpreter's version and ``_sre.MAGIC``: another Python starts a new one. A copy made
by ``re`` is checked against ``re.compile``'s (flags, groups, group names) before it is
kept; anything unexpected (no ``_sre``, an internal API that moved) falls back to
``re.compile``, never to a wrong pattern. ``ECHO_PLUGIN_CACHE=off`` keeps no copy.
Standard library only (see ``hook_record``).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Mapping
    from typing import Any

if __package__:
    from plugins.habitat.hook_record_json import dumps, loads
else:  # run as a script (the built plugin): the module beside it
    from hook_record_json import dumps, loads  # type: ignore[import-not-found, no-redef]

__all__ = ["CACHE_NAME", "PatternCache"]

CACHE_NAME = "habitat-hook-patterns.json"

_sre: Any
try:
    import _sre  # type: ignore[import-not-found, no-redef]  # CPython's regex engine

    _KEY = f"{sys.version}|{_sre.MAGIC}|{_sre.CODESIZE}"
except (ImportError, AttributeError):  # not CPython
    _sre = None
    _KEY = ""


def _with_re(source: str, flags: int) -> tuple[re.Pattern[str], list[Any] | None]:
    """``re.compile(source, flags)`` and what ``_sre.compile`` was given for it (None
    when this interpreter's compiler does not expose it)."""
    import re

    pattern = re.compile(source, flags)
    try:
        try:
            from re import _compiler, _parser  # type: ignore[attr-defined]
        except ImportError:  # Python < 3.11
            import sre_compile as _compiler
            import sre_parse as _parser
        parsed = _parser.parse(source, flags)
        code = list(_compiler._code(parsed, flags))
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        entry = [flags | parsed.state.flags, code, parsed.state.groups - 1, groupindex,
                 indexgroup]
        rebuilt = _build(source, entry)
    except Exception:  # noqa: BLE001 - the compiler's internals moved: no copy
        return pattern, None
    same = rebuilt is not None and (rebuilt.flags, rebuilt.groups, dict(rebuilt.groupindex)) \
        == (pattern.flags, pattern.groups, dict(pattern.groupindex))
    return pattern, entry if same else None


def _build(source: str, entry: list[Any]) -> re.Pattern[str] | None:
    if _sre is None:
        return None
    flags, code, groups, groupindex, indexgroup = entry
    built: re.Pattern[str] = _sre.compile(source, int(flags), [int(c) for c in code],
                                          int(groups), dict(groupindex), tuple(indexgroup))
    return built


class PatternCache:
    """Compiled patterns, through the JSON copy in ``folder`` (see the module
    docstring). ``compile`` gives each pattern; ``save`` writes new copies."""

    def __init__(self, folder: str | None) -> None:
        """Read the copies kept in ``folder`` (none when None): only from a file that is
        this user's and writable by no one else (it is regex engine code)."""
        self.path = os.path.join(folder, CACHE_NAME) if folder and _KEY else None
        self._entries: dict[str, list[Any]] = {}
        self._dirty = False
        if self.path is None:
            return
        try:
            with open(self.path, encoding="utf-8") as f:
                if not _own_private(os.fstat(f.fileno())):
                    return  # engine code another user could have written: compile anew
                data = loads(f.read())
            if isinstance(data, dict) and data.get("key") == _KEY \
                    and isinstance(data.get("patterns"), dict):
                self._entries = data["patterns"]
        except (OSError, ValueError):
            pass

    @classmethod
    def for_env(cls, env: Mapping[str, str]) -> PatternCache:
        """The cache in ``$XDG_CACHE_HOME/echo-memory`` (none with
        ``ECHO_PLUGIN_CACHE=off``)."""
        if env.get("ECHO_PLUGIN_CACHE", "").strip().lower() in ("0", "off", "false", "no"):
            return cls(None)
        base = env.get("XDG_CACHE_HOME") or os.path.join(
            env.get("HOME") or os.path.expanduser("~"), ".cache")
        return cls(os.path.join(base, "echo-memory"))

    def compile(self, source: str, flags: int = 0) -> re.Pattern[str]:
        """The pattern ``re.compile(source, flags)`` gives."""
        key = f"{flags}:{source}"
        entry = self._entries.get(key)
        if entry is not None:
            try:
                built = _build(source, entry)
            except Exception:  # noqa: BLE001 - a damaged copy: compile it anew
                built = None
            if built is not None:
                return built
        pattern, made = _with_re(source, flags)
        if made is not None and self.path is not None:
            self._entries[key] = made
            self._dirty = True
        return pattern

    def save(self) -> None:
        """Write the copies made since loading (atomically; a failure is no error)."""
        if not self._dirty or self.path is None:
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            temp = f"{self.path}.{os.getpid()}.tmp"
            with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                      encoding="utf-8") as f:
                f.write(dumps({"key": _KEY, "patterns": self._entries}))
            os.replace(temp, self.path)
            self._dirty = False
        except OSError:
            pass


def _own_private(st: os.stat_result) -> bool:
    """The file is this user's and no one else may write it (POSIX; elsewhere: True)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # pragma: no cover - not POSIX
        return True
    return st.st_uid == getuid() and not st.st_mode & 0o022
