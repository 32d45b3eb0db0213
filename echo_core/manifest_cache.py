"""Shipped TOML data read through a JSON copy, so a one-shot process skips ``tomllib``.

Importing ``tomllib`` costs a cold CLI process ~1.5 ms (with its parser's regexes), more
than reading the routing manifest it parses. ``cached_toml(path, name)`` returns the
file's parsed data: from ``$XDG_CACHE_HOME/echo-memory/<name>`` (the entry-point cache's
folder) when that copy was made from a file of the same path, size and ``st_mtime_ns``;
else the TOML is parsed and the copy rewritten atomically (temp file + ``os.replace``;
not for a file modified in the last 2 s, whose mtime may not move on its next change).
A copy that cannot be read, parsed or written is no error (the TOML is parsed);
``ECHO_PLUGIN_CACHE=off`` skips the copy. TOML's dates and times have no JSON form: a
file holding one is parsed every time (the shipped manifests hold none).
"""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["cached_toml"]

FORMAT = 1
#: A file modified less than this long ago (ns) gets no copy yet: within the file
#: system's timestamp granularity it could change again keeping its size and mtime.
RACY_NS = 2_000_000_000


def _stamp(path: str) -> list[Any]:
    st = os.stat(path)
    return [FORMAT, path, st.st_size, st.st_mtime_ns]


def _racy(mtime_ns: int) -> bool:
    """A file modified this recently may change again without its mtime changing."""
    import time

    return time.time_ns() - mtime_ns < RACY_NS


def cached_toml(path: str, name: str) -> dict[str, Any]:
    """The data of the TOML file at ``path`` (raises what reading or parsing it raises)."""
    from echo_core.entry_point_cache import cache_dir, cache_enabled

    folder = cache_dir() if cache_enabled(os.environ) else None
    stamp = _stamp(path)
    copy = os.path.join(folder, name) if folder else None
    if copy is not None:
        try:
            with open(copy, "rb") as f:
                kept = json.loads(f.read())
            if isinstance(kept, dict) and kept.get("stamp") == stamp \
                    and isinstance(kept.get("data"), dict):
                data: dict[str, Any] = kept["data"]
                return data
        except (OSError, ValueError):
            pass
    import tomllib

    with open(path, "rb") as f:
        parsed = tomllib.load(f)
    if copy is not None and stamp == _stamp(path) and not _racy(stamp[3]):
        _write(copy, {"stamp": stamp, "data": parsed})
    return parsed


def _write(copy: str, content: dict[str, Any]) -> None:
    """Replace the copy atomically; never raises (an unwritable folder is no error)."""
    tmp = f"{copy}.{os.getpid()}.tmp"
    try:
        text = json.dumps(content)  # TypeError: a date or time in the TOML: no copy
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, copy)
    except (OSError, TypeError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
