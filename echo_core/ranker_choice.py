"""Which ranker a vault searches: the one config ``recall`` names, or ``bm25`` with one
warning when that one cannot run here.

A user who removes an optional ranker's extra (``pip uninstall`` of its packages) or its
plugin keeps a working recall: ``bm25`` answers, and a ``RankerFallbackWarning`` says
once per process what was asked for, why it is not used and how to get it back. Only
when ``bm25`` is missing too does the old error stand (exit 78, naming the setting).

A factory that raises anything else (a plugin's bug) is treated the same way: the
ranker cannot run here, ``bm25`` answers, and the warning names the error, the module it
came from and what to do; so a broken ranker plugin never breaks a note write (the
core builds the ranker on the write path to keep it current). The process that falls
back records which ranker ``bm25`` stands in for (``take_stand_in``): the upkeep then
marks that one for a rebuild when a note is written (``ranker_marks``), so it catches
up once it runs again.

A factory with a ``wraps`` attribute (see ``protocols.RankerFactory``) is handed the
ranker it names, built by that ranker's own factory; one whose ``wants_storage`` is
true is also handed the vault's storage as ``storage=`` (a ranker that lives in the
vault's own database).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping
from typing import Any

from echo_core.errors import EchoError, ExitCode
from echo_core.protocols import Ranker, RankerUnavailable, Storage, Tokenizer

__all__ = ["FALLBACK_RANKER", "RankerFallbackWarning", "build_ranker", "chosen_ranker", "origin_of",
           "take_stand_in"]

#: The ranker used when the configured one cannot run.
FALLBACK_RANKER = "bm25"

_warned: set[str] = set()
_stand_in = threading.local()


class RankerFallbackWarning(UserWarning):
    """The configured ranker cannot run here; ``bm25`` answers instead."""


def origin_of(obj: object) -> str:
    """The module a ranker or its factory comes from (names the plugin's code)."""
    module = getattr(obj, "__module__", None) or type(obj).__module__
    return str(module)


def take_stand_in() -> str:
    """The configured ranker ``bm25`` last stood in for in this thread ("" when none),
    forgotten once taken (``ranker_upkeep.open_ranker`` takes it after building)."""
    name = str(getattr(_stand_in, "name", ""))
    _stand_in.name = ""
    return name


def _fallback_warning(name: str, why: str, config_path: str, todo: str = "") -> None:
    _stand_in.name = name
    todo = todo or "Install it again"
    message = (f"recall = {name!r} cannot run here ({why}); using {FALLBACK_RANKER!r} "
               f"instead. {todo}, or set recall = \"{FALLBACK_RANKER}\" in "
               f"{config_path} to silence this")
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, RankerFallbackWarning, stacklevel=3)


def chosen_ranker(registered: Mapping[str, Any], name: str, config_path: str
                  ) -> tuple[str, Any]:
    """``(name, factory)`` of the ranker to use: ``name``'s, else ``bm25``'s (warned).
    Exit 78 when neither is registered."""
    if name in registered:
        return name, registered[name]
    if FALLBACK_RANKER in registered:
        known = ", ".join(sorted(registered))
        _fallback_warning(name, f"no installed plugin registers it; installed: {known}",
                          config_path)
        return FALLBACK_RANKER, registered[FALLBACK_RANKER]
    known = ", ".join(sorted(registered)) or "none installed"
    raise EchoError(
        f"config recall = {name!r} but no plugin registers it (available: {known}); "
        f"install the plugin or set recall in {config_path}",
        ExitCode.NOT_CONFIGURED,
    )


def build_ranker(registered: Mapping[str, Any], name: str, factory: Any,
                 tokenizer: Tokenizer, folder: str, config_path: str,
                 storage: Storage | None = None) -> tuple[str, Ranker]:
    """``(name, ranker)``: ``factory``'s ranker (given the ranker it ``wraps``, and
    ``storage`` when it ``wants_storage``), or ``bm25``'s when the factory raises
    ``RankerUnavailable`` or any other non-``EchoError`` exception (warned once)."""
    cause: Exception
    try:
        return name, _made(registered, factory, tokenizer, folder, storage)
    except RankerUnavailable as exc:
        why, todo, cause = str(exc), "", exc
    except EchoError:
        raise
    except Exception as exc:  # noqa: BLE001 - a plugin's bug must not break a write

        why = f"its factory ({origin_of(factory)}) failed: {type(exc).__name__}: {exc}"
        todo = "Fix, update or disable that plugin (then `echo-memory reindex`)"
        cause = exc
    fallback = registered.get(FALLBACK_RANKER)
    if fallback is None or name == FALLBACK_RANKER:
        raise EchoError(f"config recall = {name!r} cannot run: {why}; fix or reinstall "
                        f"its plugin, or set recall in {config_path}",
                        ExitCode.NOT_CONFIGURED) from cause
    _fallback_warning(name, why, config_path, todo)
    try:
        return FALLBACK_RANKER, _made(registered, fallback, tokenizer, folder, storage)
    except EchoError:
        raise
    except Exception as exc:  # reported as what to fix, not a traceback
        raise EchoError(f"config recall = {name!r} cannot run ({why}) and neither can "
                        f"{FALLBACK_RANKER!r}: {type(exc).__name__}: {exc}; reinstall "
                        "echo-memory", ExitCode.NOT_CONFIGURED) from exc


def _made(registered: Mapping[str, Any], factory: Any, tokenizer: Tokenizer,
          folder: str, storage: Storage | None) -> Ranker:
    args: list[Any] = [tokenizer, folder]
    wraps = getattr(factory, "wraps", None)
    if wraps:
        base_factory = registered.get(wraps)
        if base_factory is None:
            raise RankerUnavailable(f"it builds on the ranker {wraps!r}, which is not "
                                    "installed")
        args.append(_made(registered, base_factory, tokenizer, folder, storage))
    if getattr(factory, "wants_storage", False):
        if storage is None:
            raise RankerUnavailable("it needs the vault's storage")
        ranker: Ranker = factory(*args, storage=storage)
        return ranker
    made: Ranker = factory(*args)
    return made
