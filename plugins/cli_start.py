"""The ``echo-memory`` console script: imports the CLI with the garbage collector
paused, then hands over to ``plugins.transport_cli.app.run``.

Importing the CLI and the core (~17 ms of a cold command) makes tens of thousands of
objects (modules, classes, functions) that form no garbage cycle to free; with the
collector on, they set off passes that cost ~1.6 ms of every cold command (interleaved
A/B, ``recall --json`` at 100k notes: paired median -1.58 ms). ``app.main`` pauses the
collector itself from there on and decides when to turn it on again (a line that goes
to click, such as ``serve``, runs with it on); it is told the state the collector was in
before this pause, so turning it on here first (which would start a pass over everything
just imported) is not needed.

This module is not inside ``plugins.transport_cli``: importing that package imports the
core first.
"""

from __future__ import annotations

import gc
from typing import NoReturn


def run() -> NoReturn:
    """The console script (``[project.scripts]``): ``app.run`` after the paused import."""
    collector_on = gc.isenabled()
    gc.disable()
    from plugins.transport_cli.app import run as run_cli

    run_cli(collector_on=collector_on)
