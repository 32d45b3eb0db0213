"""The code attrs generates for a class, compiled once per environment, not per start.

Defining an attrs class writes the source of its ``__init__``, ``__eq__``, ``__hash__``,
``__repr__`` ... and ``compile``s it: ~0.2 ms of a class's ~0.3 ms. A one-shot CLI
process defines 45 to 90 of them before it answers (~10-20 ms of a ~120 ms hook).
Python keeps the bytecode of modules in ``__pycache__``; this keeps the bytecode of
attrs' generated source the same way.

``install()`` arranges for ``attr._make._compile_and_eval`` (the one function through
which attrs compiles and runs every generated script) to be replaced, when ``attr._make``
is imported (at once when it already is; else by a one-shot ``sys.meta_path`` finder,
so a process that never imports attrs — ``echo-memory --help`` — pays nothing), by one
that looks the compiled code up by its exact ``(filename, source)`` and compiles only on
a miss. Compiling is a pure function of those two strings, the interpreter and the
compile flags: a hit is the code ``compile`` returns, so behaviour is unchanged. The
flags are attrs' own (this module has its ``from __future__ import annotations``).

One part of a generated ``__hash__`` differs per process: the hash of a string (string
hashes are salted by ``PYTHONHASHSEED``). It is cached with ``SEED_STANDIN`` in its
place and put back in the code's constants on use.

The cache is one file, ``$XDG_CACHE_HOME/echo-memory/attrs-code-<cache_tag>.marshal``
(beside the entry-point cache; ``cache_tag`` names the interpreter, as in
``__pycache__``): a marshalled dict of source -> marshalled code, read once, each entry
unmarshalled only when used. New entries are merged into it at exit, atomically (temp
file + ``os.replace``). A file that cannot be read, or of another format or interpreter,
is ignored and rewritten; a folder that cannot be written is no error;
``ECHO_PLUGIN_CACHE=off`` turns this cache off too. The file is written private (0600)
and read only when it is the user's own and writable by no one else: it holds code. When attrs has no
``_compile_and_eval`` (another attrs version), nothing is replaced.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Mapping, Sequence
from types import CodeType, ModuleType
from typing import Any

__all__ = ["SEED_STANDIN", "cache_path", "install", "installed", "own_private"]

#: Bumped when the file's layout changes.
FORMAT = 1
#: Entries kept at most (the file only grows with new classes; past this it starts
#: again from what the saving process used).
MAX_ENTRIES = 5000
#: Stands for the per-process string hash in a generated ``__hash__``.
SEED_STANDIN = 7_300_519_846_221_004_357
#: The line of a generated ``__hash__`` that holds that hash.
_TYPE_HASH = r"(hash\(\(\n\s+)(-?\d+),"
_TARGET = "attr._make"

_state: dict[str, Any] = {"installed": False, "replaced": False, "codes": None,
                          "new": {}, "saving": False}


def cache_path() -> str | None:
    """Where the compiled code is kept; None when the cache folder is unknown."""
    from echo_core.entry_point_cache import cache_dir

    folder = cache_dir()
    tag = sys.implementation.cache_tag
    return None if folder is None or not tag else os.path.join(
        folder, f"attrs-code-{tag}.marshal")


def installed() -> bool:
    """True once attrs' compile step was replaced in this process."""
    return bool(_state["replaced"])


def install() -> None:
    """Replace attrs' compile step now (``attr._make`` imported) or when it is imported.
    Does nothing with ``ECHO_PLUGIN_CACHE=off`` or without a cache folder."""
    from echo_core.entry_point_cache import cache_enabled

    if _state["installed"] or not cache_enabled(os.environ) or cache_path() is None:
        return
    _state["installed"] = True
    module = sys.modules.get(_TARGET)
    if module is not None:
        _replace(module)
    else:
        sys.meta_path.insert(0, _PatchOnImport())


class _PatchOnImport:
    """A ``sys.meta_path`` finder for ``attr._make`` only: finds it as the path finder
    does, runs it, then replaces its compile step; removes itself on first use."""

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> Any:
        if name != _TARGET:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _PatchingLoader(spec.loader)  # type: ignore[assignment]  # duck-typed
        return spec


class _PatchingLoader:
    """Delegates to the real loader, then replaces the module's compile step."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: Any) -> ModuleType | None:
        module: ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _replace(module)

    def __getattr__(self, name: str) -> Any:  # get_source, is_package, ...
        return getattr(self._loader, name)


def _replace(module: ModuleType) -> None:
    """Put the cached compile step into ``attr._make`` (when it has the function)."""
    if _state["replaced"] or not callable(getattr(module, "_compile_and_eval", None)):
        return

    def compile_and_eval(script: str, globs: dict[str, Any] | None,
                         locs: Mapping[str, object] | None = None,
                         filename: str = "") -> None:
        eval(_code(script, filename), globs, locs)  # attrs would eval it too

    module._compile_and_eval = compile_and_eval  # type: ignore[attr-defined]
    _state["replaced"] = True
    import atexit

    atexit.register(_save)


def _code(script: str, filename: str) -> CodeType:
    """The compiled ``script``: from the cache, else compiled now (and remembered)."""
    import re  # attrs imports it anyway; --help, which never gets here, does not

    codes: dict[str, Any] | None = _state["codes"]
    if codes is None:
        codes = _state["codes"] = _load()
    number = None
    found = re.search(_TYPE_HASH, script) if "hash((" in script else None
    if found is not None:
        number = int(found.group(2))
        script = f"{script[:found.start(2)]}{SEED_STANDIN}{script[found.end(2):]}"
    key = f"{filename}\0{script}"
    code = _unmarshalled(codes.get(key))
    if code is None:
        code = compile(script, filename, "exec")
        codes[key] = code
        _state["new"][key] = code
    return code if number is None else _with_constant(code, SEED_STANDIN, number)


def _unmarshalled(kept: Any) -> CodeType | None:
    """A kept entry as code (entries are read as bytes and unmarshalled on first use)."""
    if isinstance(kept, CodeType):
        return kept
    if isinstance(kept, bytes):
        try:
            code = marshal.loads(kept)
        except (EOFError, ValueError, TypeError):
            return None
        return code if isinstance(code, CodeType) else None
    return None


def _with_constant(code: CodeType, old: int, new: int) -> CodeType:
    """``code`` with every constant ``old`` (in nested code objects too) made ``new``."""
    consts = tuple(
        new if type(c) is int and c == old
        else _with_constant(c, old, new) if isinstance(c, CodeType) else c
        for c in code.co_consts)
    return code.replace(co_consts=consts)


def _load() -> dict[str, Any]:
    """source key -> marshalled code, or {} without a readable file of this format."""
    path = cache_path()
    if path is None:
        return {}
    try:
        with open(path, "rb") as f:
            if not own_private(os.fstat(f.fileno())):
                return {}  # code another user could have written is never run
            data = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if (not isinstance(data, dict) or data.get("format") != FORMAT
            or data.get("version") != sys.version or not isinstance(data.get("codes"), dict)):
        return {}
    codes: dict[str, Any] = data["codes"]
    return codes


def own_private(st: os.stat_result) -> bool:
    """The file is this user's and no one else may write it (POSIX; elsewhere: True)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # pragma: no cover - not POSIX
        return True
    return st.st_uid == getuid() and not st.st_mode & 0o022


def _save() -> None:
    """Merge this process's new entries into the file; never raises."""
    new: dict[str, CodeType] = _state["new"]
    path = cache_path()
    if not new or path is None:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        merged = {k: v for k, v in _load().items() if isinstance(v, bytes)}
        if len(merged) + len(new) > MAX_ENTRIES:
            merged = {}
        merged.update({k: marshal.dumps(v) for k, v in new.items()})
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
            marshal.dump({"format": FORMAT, "version": sys.version, "codes": merged}, f)
        os.replace(tmp, path)
        new.clear()
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
