"""Resolve-miss telemetry (SPEC §5.5): misses with candidates and ``merge_into``
confirmations, appended to ``resolve-misses.ndjson`` in the state dir (never the vault)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from echo_core.context import EchoContext


MISSES_FILE = "resolve-misses.ndjson"


def record_resolve_event(ctx: EchoContext, event: dict[str, Any]) -> None:
    """Append one timestamped JSON line; telemetry never fails an operation."""
    record = {"ts": ctx.now().isoformat(timespec="seconds"), **event}
    try:
        with open(ctx.state_dir / MISSES_FILE, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
    except OSError:
        pass
