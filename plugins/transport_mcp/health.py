"""The ``GET /health`` report: ``{ok, vault_reachable, outbox_depth, index_age_s}``.

* ``vault_reachable``: the backend answers ``ping`` (``ok`` is the same flag);
* ``outbox_depth``: records waiting in the registered outbox(es); ``None`` while no
  queue plugin is installed (the outbox arrives with a later issue);
* ``index_age_s``: seconds since the local recall index (the state dir's ``recall/``
  folder) last changed; ``None`` when there is none yet.

Never raises: anything that cannot be determined is reported as unreachable / ``None``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from echo_core import BackendUnavailable, EchoContext, EchoError


def _reachable(ctx: EchoContext) -> bool:
    try:
        ctx.storage.ping()
    except (BackendUnavailable, EchoError, OSError):
        return False
    return True


def _outbox_depth(ctx: EchoContext) -> int | None:
    try:
        queues = ctx.host.collect("register_queues")
        if not queues:
            return None
        return sum(len(factory(str(ctx.state_dir)).pending()) for factory in queues.values())
    except Exception:  # noqa: BLE001 - unknown, not a failure of /health
        return None


def _index_age(ctx: EchoContext) -> float | None:
    try:
        folder = Path(ctx.state_dir) / "recall"
        newest = max((p.stat().st_mtime for p in folder.rglob("*") if p.is_file()), default=None)
    except (OSError, EchoError, BackendUnavailable):
        return None
    if newest is None:
        return None
    return round(max(0.0, time.time() - newest), 1)


def health_report(ctx: EchoContext) -> dict[str, Any]:
    """The report for ``ctx``'s vault (see module docstring)."""
    reachable = _reachable(ctx)
    return {"ok": reachable, "vault_reachable": reachable, "outbox_depth": _outbox_depth(ctx),
            "index_age_s": _index_age(ctx)}
