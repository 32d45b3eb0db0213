"""This thread's open index of a vault's loom (``index_for``): one SQLite connection per
thread, process and folder, opened on first use and kept.

A module of its own so that ``record_source`` and ``loom_search`` both reach it without
importing each other.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from plugins.habitat.loom import Loom
from plugins.habitat.loom_index import INDEX_NAME, LoomIndex
from plugins.habitat.paths import habitat_dir, loom_dir

__all__ = ["index_for"]


_LOCAL = threading.local()


def index_for(ctx: Any) -> LoomIndex:
    """This thread's open index of ``ctx``'s loom (opened on first use)."""
    path = habitat_dir(ctx) / INDEX_NAME
    cache: dict[tuple[int, Path], LoomIndex] | None = getattr(_LOCAL, "indexes", None)
    if cache is None:
        cache = _LOCAL.indexes = {}
    key = (os.getpid(), path)
    index = cache.get(key)
    if index is None:
        index = cache[key] = LoomIndex.open(Loom(loom_dir(ctx)), path)
    return index
