"""What the core does when the active ranker (a plugin) misbehaves.

A ranker is a plugin's object, so the core never lets it break a write or answer in a
shape the rest of recall cannot use:

* a failing ``upsert`` / ``remove`` never fails the write it follows (the note is
  durable already): it is logged and warned once (``RankerFaultWarning``, naming the
  ranker and what to do), and the ranker is marked for a rebuild (``ranker_marks``), so
  recall catches up;
* a failing ``search``, build or rebuild raises ``RankerFailed`` (exit 78) naming the
  ranker, where it comes from, what failed and what to do, instead of a traceback;
* ``search`` results are checked in one pass per call (``checked_hits``): a result that
  is not a list is a failure; an item that is not a ``(path, score)`` pair, a score that
  is not a finite number > 0 and a path that is not a clean vault path (``..``, absolute)
  are dropped, a path given twice keeps its best score, and the rest come highest first,
  at most ``limit``. What was dropped is reported (``report``) naming the ranker.

``report`` adds to the messages ``collected()`` gathers (recall puts them in its answer's
warnings), and otherwise warns once per process.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import warnings
from collections.abc import Iterator
from typing import Any

from echo_core.errors import EchoError, ExitCode
from echo_core.lazy_log import lazy_logger
from echo_core.paths import normalize_path
from echo_core.ranker_choice import FALLBACK_RANKER, RankerFallbackWarning, origin_of

__all__ = ["RankerFailed", "RankerFaultWarning", "checked_hits", "collected", "fault_text",
           "guarded", "origin_of", "report"]

log = lazy_logger("echo_memory")

_warned: set[str] = set()
_collector: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "echo_ranker_faults", default=None)


class RankerFaultWarning(RankerFallbackWarning):
    """The active ranker failed or answered out of shape (a ``RankerFallbackWarning``,
    so every surface that shows that one shows this one too)."""


def _advice(plugin: str, config_path: str) -> str:
    where = f" in {config_path}" if config_path else " in the config file"
    disable = f" (ECHO_DISABLE_PLUGINS={plugin})" if plugin else ""
    return (f"fix, update or disable that plugin{disable}, or set recall = "
            f"\"{FALLBACK_RANKER}\"{where} and run `echo-memory reindex`")


class RankerFailed(EchoError):
    """The active ranker raised (or answered with something that is not a list)."""

    code = ExitCode.NOT_CONFIGURED

    def __init__(self, name: str, origin: str, doing: str, problem: str, *,
                 plugin: str = "", config_path: str = "") -> None:
        self.name, self.origin, self.doing, self.problem = name, origin, doing, problem
        self.plugin, self.config_path = plugin, config_path
        source = f"plugin {plugin!r}, {origin}" if plugin else origin
        super().__init__(f"ranker {name!r} ({source}) failed {doing}: {problem}; "
                         + _advice(plugin, config_path))

    def named(self, plugin: str, config_path: str) -> RankerFailed:
        """The same failure, its message naming the plugin and the config file."""
        return RankerFailed(self.name, self.origin, self.doing, self.problem,
                            plugin=plugin, config_path=config_path)


def _problem(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextlib.contextmanager
def guarded(name: str, obj: object, doing: str) -> Iterator[None]:
    """Run a call into ranker ``name`` (the object ``obj``): an ``EchoError`` passes
    unchanged (the vault unreachable, a lock held), any other exception becomes
    ``RankerFailed`` saying it was ``doing`` that."""
    try:
        yield
    except EchoError:
        raise
    except Exception as exc:
        raise RankerFailed(name, origin_of(obj), doing, _problem(exc)) from exc


def fault_text(name: str, obj: object, doing: str, exc: BaseException) -> str:
    """The warning for a failure that costs only the index: what failed, what to do."""
    return (f"ranker {name!r} ({origin_of(obj)}) failed {doing}: {_problem(exc)}; the note "
            "itself is saved, and the ranker is rebuilt from the notes before its next "
            "search. To stop this, " + _advice("", ""))


def report(message: str) -> None:
    """Tell the user about a ranker problem: into the messages being ``collected()``
    when a caller gathers them (each once), else a ``RankerFaultWarning`` once per
    process; logged either way."""
    log.warning("%s", message)
    gathered = _collector.get()
    if gathered is not None:
        if message not in gathered:
            gathered.append(message)
        return
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, RankerFaultWarning, stacklevel=3)


@contextlib.contextmanager
def collected() -> Iterator[list[str]]:
    """Gather what ``report`` says inside the block (per thread and task) instead of
    warning."""
    gathered: list[str] = []
    token = _collector.set(gathered)
    try:
        yield gathered
    finally:
        _collector.reset(token)


def _score(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def checked_hits(name: str, ranker: object, found: Any, limit: int) -> list[tuple[str, float]]:
    """``found`` (what ``ranker.search`` returned) in the documented shape: unique clean
    vault paths, finite scores > 0, highest first (then by path), at most ``limit``.
    Raises ``RankerFailed`` when it is not a list or tuple; reports what it drops."""
    if not isinstance(found, (list, tuple)):
        raise RankerFailed(name, origin_of(ranker), "in search",
                           f"it returned {type(found).__name__}, not a list of (path, "
                           "score) pairs")
    best: dict[str, float] = {}
    dropped: dict[str, int] = {}
    shown: list[str] = []

    def drop(why: str, item: Any = None) -> None:
        dropped[why] = dropped.get(why, 0) + 1
        if item is not None and len(shown) < 3:
            shown.append(repr(item)[:80])

    for item in found:
        if not isinstance(item, (list, tuple)) or len(item) != 2 \
                or not isinstance(item[0], str):
            drop("not a (path, score) pair", item)
            continue
        path, score = item[0], _score(item[1])
        if score is None or not math.isfinite(score) or score <= 0:
            drop("score not a finite number > 0")
            continue
        try:
            clean = normalize_path(path)
        except EchoError:
            drop("path outside the vault", path)
            continue
        if clean in best:
            drop("path given twice (best score kept)")
            if score <= best[clean]:
                continue
        best[clean] = score
    if dropped:
        what = ", ".join(f"{count} {why}" for why, count in dropped.items())
        examples = f" (such as {', '.join(shown)})" if shown else ""
        report(f"ranker {name!r} ({origin_of(ranker)}) returned results out of shape, left "
               f"out of the answer: {what}{examples}; fix or update that plugin, or set "
               f"recall = \"{FALLBACK_RANKER}\" in the config file")
    return sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
