"""Text a process computed from its own code, kept for the next process that would
compute the same text (``echo-memory --help``: ~25 ms of importing click and building
every command for a page that changes only when the code does).

``remember_output(name, key, text)`` writes ``text`` under ``name`` (one JSON file in
the entry-point cache's folder, written privately and atomically: temp file +
``os.replace``) with ``key`` (JSON values naming every other input: arguments, terminal
width, interpreter, plugins...) and the size and ``st_mtime_ns`` of every source file of
every module loaded in the process when it is called, plus ``extra_files`` (only those
with ``loaded_modules=False``). ``cached_output(name, key)`` returns the text only when
the key is equal and every one of those files still has that size and mtime (a missing
file is a change), so an edited, installed or removed module means a miss; else None.

A file that is not the user's own, or that others may write, is never read.
Nothing is written while a recorded file was modified in the last 2 s (its mtime may not
move on its next change), or when ``ECHO_PLUGIN_CACHE`` is off. A file that cannot be
read, parsed or written is no error: the text is computed again.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable, Mapping
from typing import Any

from echo_core.attrs_code_cache import own_private
from echo_core.entry_point_cache import cache_dir, cache_enabled

__all__ = ["cached_output", "remember_output"]

FORMAT = 1
RACY_NS = 2_000_000_000


def _file(name: str) -> str | None:
    folder = cache_dir()
    if folder is None or not name or not all(c.isalnum() or c in "_.-" for c in name):
        return None
    return os.path.join(folder, f"output-{name}.json")


def _stamp(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return [st.st_size, st.st_mtime_ns]


def _loaded_files() -> set[str]:
    files = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and os.path.isabs(path):
            files.add(path)
    return files


def cached_output(name: str, key: Mapping[str, Any]) -> str | None:
    """The text remembered under ``name`` for ``key``, when none of the files it was made
    from has changed since; else None."""
    path = _file(name)
    if path is None or not cache_enabled({}):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            if not own_private(os.fstat(handle.fileno())):
                return None  # text another user could have written is never printed
            entry = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        return None
    if entry.get("key") != json.loads(json.dumps(key)):
        return None
    files = entry.get("files")
    text = entry.get("text")
    if not isinstance(files, dict) or not isinstance(text, str):
        return None
    for source, stamp in files.items():
        if _stamp(source) != stamp:
            return None
    return text


def remember_output(name: str, key: Mapping[str, Any], text: str,
                    extra_files: Iterable[str] = (), *, loaded_modules: bool = True) -> None:
    """Keep ``text`` under ``name`` for ``key`` (see the module docstring), checked
    against ``extra_files`` and, unless not ``loaded_modules``, the source of every
    module loaded now; never raises for a cache that cannot be written."""
    path = _file(name)
    if path is None or not cache_enabled({}):
        return
    files: dict[str, list[int]] = {}
    now = time.time_ns()
    sources = (_loaded_files() if loaded_modules else set()) | set(extra_files)
    for source in sorted(sources):
        stamp = _stamp(source)
        if stamp is None:
            continue
        if now - stamp[1] < RACY_NS:
            return  # may change again without its mtime moving: not yet
        files[source] = stamp
    entry = {"format": FORMAT, "key": key, "files": files, "text": text}
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        temp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(entry, handle)
        os.replace(temp, path)
    except (OSError, TypeError, ValueError):
        try:
            os.unlink(temp)
        except (OSError, UnboundLocalError):
            pass
