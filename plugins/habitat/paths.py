"""Where the habitat keeps its state: ``<state_dir>/habitat/`` (the loom's day files, the
SQLite registries). Never in the vault: the vault holds only what a person should read
(insight notes, the daily digest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["HABITAT_DIR", "LEARNINGS_FILE", "habitat_dir", "loom_dir"]

HABITAT_DIR = "habitat"
#: The learnings store's file in the habitat's folder.
LEARNINGS_FILE = "learnings.sqlite"


def habitat_dir(ctx: Any) -> Path:
    """The habitat's folder in ``ctx``'s state dir (not created here)."""
    return Path(ctx.state_dir) / HABITAT_DIR


def loom_dir(ctx: Any) -> Path:
    """The loom's day files' folder."""
    from plugins.habitat.loom import LOOM_DIR

    return habitat_dir(ctx) / LOOM_DIR
